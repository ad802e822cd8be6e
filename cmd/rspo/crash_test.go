package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/swapper/swappertest"
)

// buildRSPO builds this command into a temporary directory.
func buildRSPO(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the binary with")
	}
	bin := filepath.Join(t.TempDir(), "rspo")
	out, err := exec.Command(gobin, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// proc is a service process that the test kills and restarts.
type proc struct {
	t    *testing.T
	args []string
	log  *os.File
	cmd  *exec.Cmd
	done chan error
}

func newProc(t *testing.T, bin, logPath string, args ...string) *proc {
	t.Helper()
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, args: append([]string{bin}, args...), log: log}
	p.start()
	t.Cleanup(func() {
		p.kill()
		log.Close()
	})
	return p
}

func (p *proc) start() {
	p.t.Helper()
	p.cmd = exec.Command(p.args[0], p.args[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		p.t.Fatalf("start %v: %v", p.args, err)
	}
	p.done = make(chan error, 1)
	go func(cmd *exec.Cmd, done chan error) { done <- cmd.Wait() }(p.cmd, p.done)
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	p.cmd = nil
}

// stop sends SIGTERM and waits for a clean exit.
func (p *proc) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.cmd = nil
		return err
	case <-time.After(30 * time.Second):
		p.kill()
		return errors.New("did not stop within 30s of SIGTERM")
	}
}

// TestCrashSwapperAndBufferLoseAndDuplicateNothing runs the swapper and the
// buffer as separate processes, SIGKILLs each several times while explorer
// trajectories stream in, restarts them, and checks that the buffer ends up
// with exactly the published trajectories: none lost, none duplicated.
func TestCrashSwapperAndBufferLoseAndDuplicateNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs services as processes; skipped with -short")
	}
	const (
		run    = "crash"
		n      = 300
		rounds = 4
	)
	bin := buildRSPO(t)
	e, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	nc, js, err := e.Connect(ctx, "crash-test")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := streams.Ensure(ctx, js, streams.Options{}); err != nil {
		t.Fatal(err)
	}
	dir, data := t.TempDir(), filepath.Join(t.TempDir(), "buffer")
	url := e.ClientURL()
	swap := newProc(t, bin, filepath.Join(dir, "swapper.log"),
		"serve", "swapper", "--nats", url, "--run", run, "--batch", "8", "--ack-wait", "2s")
	buf := newProc(t, bin, filepath.Join(dir, "buffer.log"),
		"serve", "buffer", "--nats", url, "--run", run, "--data", data, "--batch", "16", "--ack-wait", "2s")

	published := make([]string, 0, n)
	successes := 0
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			tr := swappertest.Explorer(run, 1, i, 32)
			tr.Env = "household" // the rspo binary refuses environments it does not know; nothing here replays
			if _, err := streams.PublishTrajectory(ctx, js, tr); err != nil {
				t.Errorf("publish %d: %v", i, err)
				return
			}
			published = append(published, tr.ID)
			if tr.Success {
				successes++
			}
			time.Sleep(15 * time.Millisecond)
		}
	})
	rng := rand.New(rand.NewPCG(7, 7))
	for round := range rounds {
		for name, p := range map[string]*proc{"swapper": swap, "buffer": buf} {
			time.Sleep(time.Duration(200+rng.IntN(500)) * time.Millisecond)
			t.Logf("round %d: SIGKILL %s with %d trajectories published, %d records swapped", round, name,
				streamCount(t, ctx, js, streams.StreamTraj, streams.Subjects(run).TrajExplore),
				streamCount(t, ctx, js, streams.StreamSwapped, streams.Subjects(run).Swapped))
			p.kill()
			p.start()
		}
	}
	wg.Wait()

	client, err := buffersvc.NewClient(nc, run)
	if err != nil {
		t.Fatal(err)
	}
	var st buffersvc.Stats
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if st, err = client.Stats(ctx); err == nil && st.Records >= n {
			break
		}
	}
	if st.Records != n {
		t.Errorf("buffer stats report %d records (err %v), want %d", st.Records, err, n)
	}
	for name, p := range map[string]*proc{"swapper": swap, "buffer": buf} {
		if err := p.stop(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	store, err := buffersvc.Open(data, buffersvc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	got, err := store.IDs(run, 1)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(published)
	if !slices.Equal(got, published) {
		lost, extra := diff(published, got), diff(got, published)
		t.Errorf("buffer holds %d records, want %d: %d lost %v, %d unexpected %v", len(got), n, len(lost), lost, len(extra), extra)
	}
	final, err := store.Stats(run)
	if err != nil {
		t.Fatal(err)
	}
	if final.Records != n || len(final.Cycles) != 1 || final.Cycles[0].Successes != int64(successes) {
		t.Errorf("store stats %+v, want %d records with %d successes in cycle 1", final, n, successes)
	}
	swapped := streamCount(t, ctx, js, streams.StreamSwapped, streams.Subjects(run).Swapped)
	if swapped != n {
		t.Errorf("the swapped stream holds %d records, want exactly %d (no duplicate publishes)", swapped, n)
	}
	if dead := streamCount(t, ctx, js, streams.StreamDLQ, streams.Subjects(run).DLQAll); dead != 0 {
		t.Errorf("%d messages were dead-lettered, want none", dead)
	}
	if t.Failed() {
		for _, name := range []string{"swapper.log", "buffer.log"} {
			b, _ := os.ReadFile(filepath.Join(dir, name))
			t.Logf("%s:\n%s", name, b)
		}
	}
}

// diff returns the elements of a (sorted) missing from b (sorted).
func diff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); !found {
			out = append(out, x)
		}
	}
	return out
}

func streamCount(t *testing.T, ctx context.Context, js jetstream.JetStream, stream, subject string) uint64 {
	t.Helper()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		t.Fatal(fmt.Errorf("stream %s info: %w", stream, err))
	}
	var total uint64
	for _, c := range info.State.Subjects {
		total += c
	}
	return total
}
