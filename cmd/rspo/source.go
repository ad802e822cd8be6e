package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/streams"
)

// sourceFlags say where a command reading a recorded run finds it: a
// server (--nats and the other connection flags) or, with --data, a store
// directory read in-process, with no server to start first.
type sourceFlags struct {
	nf   natsFlags
	data string
	fs   *pflag.FlagSet
}

// register adds the connection flags and --data to fs.
func (s *sourceFlags) register(fs *pflag.FlagSet) {
	s.nf.register(fs)
	s.fs = fs
	fs.StringVar(&s.data, "data", "", "read the run's store directly: the --data of rspo run (or its nats directory, the --data of rspo serve nats), instead of --nats")
}

// open connects to the server or starts one in-process on the store of
// --data (on loopback, a free port: it serves this command only). The
// caller calls closeFn when done.
func (s *sourceFlags) open(ctx context.Context, name string) (js jetstream.JetStream, closeFn func(), err error) {
	if s.data == "" {
		nc, js, err := s.nf.connect(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		return js, nc.Close, nil
	}
	if s.fs != nil && s.fs.Changed("nats") {
		return nil, nil, errors.New("--data and --nats are exclusive: read a store directly or through a server")
	}
	dir, err := storeDir(s.data)
	if err != nil {
		return nil, nil, err
	}
	emb, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: dir, Host: "127.0.0.1", Port: -1})
	if err != nil {
		return nil, nil, fmt.Errorf("--data %s: %w", s.data, err)
	}
	nc, js, err := emb.Connect(ctx, name)
	if err != nil {
		emb.Shutdown()
		return nil, nil, err
	}
	return js, func() { nc.Close(); emb.Shutdown() }, nil
}

// storeDir finds the JetStream store under dir: dir itself (the --data of
// `rspo serve nats`) or dir/nats (of `rspo run`). It never creates one.
func storeDir(dir string) (string, error) {
	for _, d := range []string{dir, filepath.Join(dir, "nats")} {
		if st, err := os.Stat(filepath.Join(d, "jetstream")); err == nil && st.IsDir() {
			return d, nil
		}
	}
	return "", fmt.Errorf("--data %s: no JetStream store there or in %s", dir, filepath.Join(dir, "nats"))
}

// runMessages counts the messages of every run on the server, by run.
func runMessages(ctx context.Context, js jetstream.JetStream) (map[string]uint64, error) {
	usage, err := streams.Usage(ctx, js)
	if err != nil {
		return nil, err
	}
	counts := map[string]uint64{}
	for run, u := range usage {
		if u.Messages > 0 {
			counts[run] = u.Messages
		}
	}
	return counts, nil
}

// runFilesRoot is the directory that holds the runs' own files (their
// buffer stores and reports, <data>/<run>): --data when it is the data
// directory of `rspo run` rather than a bare JetStream store, "" otherwise.
func (s *sourceFlags) runFilesRoot() string {
	if s.data == "" {
		return ""
	}
	if dir, err := storeDir(s.data); err != nil || dir == s.data {
		return ""
	}
	return s.data
}

// dirSize is the disk space the files under dir take (allocated blocks,
// as du counts them: preallocated space too), 0 when dir does not exist.
func dirSize(dir string) (uint64, error) {
	var n uint64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			n += uint64(st.Blocks) * 512
		} else {
			n += uint64(info.Size())
		}
		return nil
	})
	return n, err
}

// requireRun fails unless the server holds messages of run, naming the
// runs it does hold.
func requireRun(ctx context.Context, js jetstream.JetStream, run string) error {
	if err := streams.ValidateRun(run); err != nil {
		return fmt.Errorf("--run: %w", err)
	}
	counts, err := runMessages(ctx, js)
	if err != nil || counts[run] > 0 {
		return err
	}
	if len(counts) == 0 {
		return fmt.Errorf("run %s does not exist: the server holds no runs", run)
	}
	names := make([]string, 0, len(counts))
	for r := range counts {
		names = append(names, r)
	}
	slices.Sort(names)
	return fmt.Errorf("run %s does not exist; the server holds %s", run, strings.Join(names, ", "))
}
