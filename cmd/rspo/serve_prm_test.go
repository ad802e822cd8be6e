package main

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmsvc"
	"github.com/rspo-dev/rspo/prm/prmtest"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
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

// TestServePRMRefresh starts `rspo serve prm --refresh` from the random
// control: a cycle.ended event makes it train on the run's recorded
// trajectories, publish version 1, and serve it.
func TestServePRMRefresh(t *testing.T) {
	s := streamstest.RunServer(t)
	nc, js := streamstest.Connect(t, s)
	ctx, stop := context.WithCancel(testContext(t))
	trajs, _ := prmtest.Decisive("sp2", 1, 40, 4)
	for _, tr := range trajs {
		if _, err := streams.PublishTrajectory(ctx, js, tr); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := runRspo(ctx, "serve", "prm", "--nats", s.ClientURL(), "--run", "sp2", "--random", "1",
			"--refresh", "--epochs", "5", "--dim", "32", "--hidden", "8")
		done <- err
	}()
	client, _ := prmsvc.NewClient(nc, "sp2")
	for cycle, deadline := int64(1), time.Now().Add(20*time.Second); ; cycle++ {
		e := schemas.Event{Type: schemas.EventCycleEnded, Run: "sp2", Cycle: cycle, Time: time.Now()}
		if _, err := streams.PublishEvent(ctx, js, e); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		if reply, err := client.Score(ctx, trajs[:1]); err == nil && reply.PRMVersion >= 1 {
			if !reply.Info.Trained {
				t.Errorf("refreshed model is not marked trained: %+v", reply.Info)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("serve prm --refresh never served a refreshed version")
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("serve prm returned %v after interrupt, want nil", err)
	}
}
