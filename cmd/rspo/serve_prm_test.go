package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmsvc"
	"github.com/rspo-dev/rspo/prm/prmtest"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// TestServePRM starts `rspo serve prm` against an in-process server and
// scores from a separate connection; garbage gets an error reply.
func TestServePRM(t *testing.T) {
	s := streamstest.RunServer(t)
	nc, _ := streamstest.Connect(t, s)
	model := filepath.Join(t.TempDir(), "prm.bin")
	m := prm.Random(5)
	m.Version = 4
	if err := prm.SaveFile(model, m); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() {
		_, _, err := runRspo(ctx, "serve", "prm", "--nats", s.ClientURL(), "--run", "sp1", "--model", model)
		done <- err
	}()
	client, err := prmsvc.NewClient(nc, "sp1")
	if err != nil {
		t.Fatal(err)
	}
	trajs, _ := prmtest.Decisive("sp1", 1, 2, 3)
	var reply prmsvc.ScoreReply
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if reply, err = client.Score(ctx, trajs); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("no answer from serve prm: %v", err)
	}
	if reply.PRMVersion != 4 || reply.Totals[1] != m.Score(trajs[1]) {
		t.Errorf("got version %d total %v, want 4 and %v", reply.PRMVersion, reply.Totals[1], m.Score(trajs[1]))
	}
	if _, err := client.ScoreRaw(ctx, []byte("garbage")); !errors.Is(err, prmsvc.ErrBadRequest) {
		t.Errorf("garbage request: got %v, want ErrBadRequest", err)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("serve prm returned %v after interrupt, want nil", err)
	}
}

// The learner owns PRM refresh (its cycle plans name the versions the
// explorers use): the scoring service refuses --refresh and says where it
// belongs, instead of publishing versions of its own under the same names.
func TestServePRMRefusesRefresh(t *testing.T) {
	for _, flag := range []string{"--refresh", "--extra-run", "--refresh-window", "--refresh-epochs"} {
		args := []string{"serve", "prm", "--nats", "nats://127.0.0.1:1", "--run", "sp2", "--random", "1", flag}
		if flag != "--refresh" {
			args = append(args, "x")
		}
		_, _, err := runRspo(testContext(t), args...)
		if err == nil || !strings.Contains(err.Error(), flag) || !strings.Contains(err.Error(), "--prm-refresh") {
			t.Errorf("%s: got %v, want a refusal naming the flag and --prm-refresh", flag, err)
		}
	}
}
