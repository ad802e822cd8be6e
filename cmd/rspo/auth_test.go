package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/auth"
)

// TestAuthInitServeNATS serves the configuration `rspo auth init` wrote:
// the streams exist in the run's account, its admin sees them, and a client
// without credentials is refused.
func TestAuthInitServeNATS(t *testing.T) {
	dir := t.TempDir()
	if err := authInit([]string{"ra"}, dir, io.Discard); err != nil {
		t.Fatal(err)
	}
	url, stop := startServeNATS(t, serveNATSFlags{data: t.TempDir(), host: "127.0.0.1", port: -1,
		auth: serveNATSAuth{config: filepath.Join(dir, auth.ConfigFile)}})
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	ctx := context.Background()
	admin := natsFlags{url: url, creds: auth.CredsPath(dir, "ra", auth.Admin)}
	nc, js, err := admin.connect(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var out strings.Builder
	if err := writeStreamsReport(ctx, js, "ra", &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "missing") || !strings.Contains(out.String(), streams.StreamTraj) {
		t.Errorf("streams report:\n%s", out.String())
	}
	anon := natsFlags{url: url}
	if nc, _, err := anon.connect(ctx, "test"); err == nil {
		nc.Close()
		t.Error("a client without credentials connected")
	} else if !errors.Is(err, streams.ErrConnect) {
		t.Errorf("anonymous connect: %v", err)
	}
}

func TestAuthInitRefuses(t *testing.T) {
	for _, runs := range [][]string{{"a b"}, {"x", "x"}} {
		if err := authInit(runs, t.TempDir(), io.Discard); err == nil {
			t.Errorf("auth init %q: no error", runs)
		}
	}
}

func TestAuthPasswordFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pw")
	if err := os.WriteFile(file, []byte("s3cret\r\nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args    []string
		want    string
		wantErr bool
	}{
		{[]string{"--password-file", file}, "s3cret", false},
		{[]string{"--password-file", filepath.Join(dir, "none")}, "", true},
		{[]string{"--user", "u"}, "from-env", false},
	}
	t.Setenv("NATS_PASSWORD", "from-env")
	for _, tc := range tests {
		var f natsFlags
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f.register(fs)
		err := fs.Parse(tc.args)
		if (err != nil) != tc.wantErr {
			t.Errorf("%v: error %v, want error %v", tc.args, err, tc.wantErr)
			continue
		}
		if got := f.options("t").Password; err == nil && got != tc.want {
			t.Errorf("%v: password %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestAuthRunEmbeddedLine(t *testing.T) {
	for _, sync := range []bool{false, true} {
		line := embeddedLine(pipeline.Config{DataDir: "d", SyncAlways: sync})
		if !strings.Contains(line, "127.0.0.1 only") || strings.Contains(line, "every write") != sync {
			t.Errorf("sync %v: %q", sync, line)
		}
	}
}
