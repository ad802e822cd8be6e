package streams_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

func TestEnsureIdempotent(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s) // Ensure #1
	ctx := context.Background()
	opts := streams.Options{MaxAge: time.Hour, MaxBytes: 1 << 30}
	for i := range 2 {
		if err := streams.Ensure(ctx, js, opts); err != nil {
			t.Fatalf("Ensure #%d: %v", i+2, err)
		}
	}
	for _, spec := range streams.Topology() {
		st, err := js.Stream(ctx, spec.Name)
		if err != nil {
			t.Fatalf("stream %s: %v", spec.Name, err)
		}
		cfg := st.CachedInfo().Config
		if cfg.Retention != spec.Retention {
			t.Errorf("%s retention: got %v, want %v", spec.Name, cfg.Retention, spec.Retention)
		}
		if cfg.MaxAge != time.Hour || cfg.MaxBytes != 1<<30 {
			t.Errorf("%s limits: got age %v bytes %d, want 1h and %d", spec.Name, cfg.MaxAge, cfg.MaxBytes, 1<<30)
		}
		if spec.Dedupe && cfg.Duplicates != streams.DefaultDuplicateWindow {
			t.Errorf("%s dedupe window: got %v, want %v", spec.Name, cfg.Duplicates, streams.DefaultDuplicateWindow)
		}
	}
	for _, b := range []string{streams.BucketPolicy, streams.BucketPRM} {
		if _, err := js.ObjectStore(ctx, b); err != nil {
			t.Errorf("object store %s: %v", b, err)
		}
	}
	if _, err := streams.State(ctx, js); err != nil {
		t.Errorf("state bucket: %v", err)
	}
}

func TestEnsureRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts streams.Options
	}{
		{"negative age", streams.Options{MaxAge: -time.Second}},
		{"negative bytes", streams.Options{MaxBytes: -1}},
		{"six replicas", streams.Options{Replicas: 6}},
		{"bad storage", streams.Options{Storage: jetstream.StorageType(7)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// No server needed: options are checked before any request.
			err := streams.Ensure(context.Background(), nil, tt.opts)
			if !errors.Is(err, streams.ErrInvalidConfig) {
				t.Fatalf("got %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestSnapshotsRoundTrip(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	name := streams.PolicyObject("r1", 12)
	if name != "r1/v000000000012" {
		t.Fatalf("got object name %q, want r1/v000000000012", name)
	}
	want := []byte("weights")
	if err := streams.PutSnapshot(ctx, js, streams.BucketPolicy, name, want); err != nil {
		t.Fatal(err)
	}
	got, err := streams.GetSnapshot(ctx, js, streams.BucketPolicy, name)
	if err != nil || string(got) != string(want) {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
	_, err = streams.GetSnapshot(ctx, js, streams.BucketPRM, streams.PRMObject("r1", 1))
	if !errors.Is(err, jetstream.ErrObjectNotFound) {
		t.Fatalf("missing object: got %v, want ErrObjectNotFound", err)
	}
}

func TestConcurrentEnsure(t *testing.T) {
	s := streamstest.RunServer(t)
	nc, js, err := streams.Connect(context.Background(), s.ClientURL(), streams.ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- streams.Ensure(context.Background(), js, streams.Options{})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Ensure: %v", err)
		}
	}
}

func TestEnsureKeepsOperatorLimits(t *testing.T) {
	s := streamstest.RunServer(t)
	nc, js, err := streams.Connect(context.Background(), s.ClientURL(), streams.ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	steps := []struct {
		name      string
		opts      streams.Options
		wantAge   time.Duration
		wantBytes int64
		wantDup   time.Duration
	}{
		{"operator sets limits", streams.Options{MaxAge: time.Hour, MaxBytes: 1 << 20, DuplicateWindow: time.Minute}, time.Hour, 1 << 20, time.Minute},
		{"service with zero options", streams.Options{}, time.Hour, 1 << 20, time.Minute},
		{"operator raises the age", streams.Options{MaxAge: 2 * time.Hour}, 2 * time.Hour, 1 << 20, time.Minute},
	}
	for _, step := range steps {
		if err := streams.Ensure(ctx, js, step.opts); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		st, err := js.Stream(ctx, streams.StreamTraj)
		if err != nil {
			t.Fatal(err)
		}
		cfg := st.CachedInfo().Config
		if cfg.MaxAge != step.wantAge || cfg.MaxBytes != step.wantBytes || cfg.Duplicates != step.wantDup {
			t.Errorf("%s: got age %v, bytes %d, dedupe %v; want %v, %d, %v", step.name,
				cfg.MaxAge, cfg.MaxBytes, cfg.Duplicates, step.wantAge, step.wantBytes, step.wantDup)
		}
	}
}

func TestEnsureRetentionConflict(t *testing.T) {
	s := streamstest.RunServer(t)
	nc, js, err := streams.Connect(context.Background(), s.ClientURL(), streams.ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	// Someone made RSPO_WORK a limits stream; JetStream cannot turn it
	// into a work queue in place.
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: streams.StreamWork, Subjects: []string{"rspo.*.work.>"}}); err != nil {
		t.Fatal(err)
	}
	err = streams.Ensure(ctx, js, streams.Options{})
	if !errors.Is(err, streams.ErrTopologyConflict) || !strings.Contains(err.Error(), streams.StreamWork) {
		t.Fatalf("got %v, want ErrTopologyConflict naming %s", err, streams.StreamWork)
	}
}
