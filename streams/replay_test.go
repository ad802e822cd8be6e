package streams_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// publishMix stores explore trajectories 0..n-1 interleaved with on-policy
// ones and a control event, and returns the explore ones.
func publishMix(t *testing.T, js jetstream.JetStream, run string, n int) []*schemas.Trajectory {
	t.Helper()
	ctx := context.Background()
	var explore []*schemas.Trajectory
	for i := range n {
		tr := streamstest.Trajectory(run, schemas.SourceExplore, uint64(i))
		explore = append(explore, tr)
		if _, err := streams.PublishTrajectory(ctx, js, tr); err != nil {
			t.Fatal(err)
		}
		if _, err := streams.PublishTrajectory(ctx, js, streamstest.Trajectory(run, schemas.SourceOnPolicy, uint64(i))); err != nil {
			t.Fatal(err)
		}
	}
	return explore
}

func replayAll(t *testing.T, js jetstream.JetStream, o streams.ReplayOptions) []streams.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got []streams.Message
	if err := streams.Replay(ctx, js, o, func(m streams.Message) error { got = append(got, m); return nil }); err != nil {
		t.Fatalf("Replay: %v", err)
	}
	return got
}

func TestReplayTrajectories(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	want := publishMix(t, js, "r1", 5)
	publishMix(t, js, "other", 2) // another run on the same server

	got := replayAll(t, js, streams.ReplayOptions{Run: "r1", Subject: "traj.explore"})
	if len(got) != len(want) {
		t.Fatalf("got %d messages, want %d", len(got), len(want))
	}
	for i, m := range got {
		if m.Err != nil {
			t.Fatalf("message %d: %v", i, m.Err)
		}
		if !reflect.DeepEqual(m.Trajectory, want[i]) {
			t.Errorf("message %d:\ngot  %+v\nwant %+v", i, m.Trajectory, want[i])
		}
		if m.Stream != streams.StreamTraj || m.Subject != "rspo.r1.traj.explore" || m.Seq != uint64(2*i+1) {
			t.Errorf("message %d: got %s %s seq %d, want RSPO_TRAJ rspo.r1.traj.explore seq %d", i, m.Stream, m.Subject, m.Seq, 2*i+1)
		}
	}
}

func TestReplayStartPositions(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	publishMix(t, js, "r1", 4) // explore at seqs 1,3,5,7
	tests := []struct {
		name    string
		opts    streams.ReplayOptions
		wantSeq []uint64
	}{
		{"all of traj", streams.ReplayOptions{Subject: "traj"}, []uint64{1, 2, 3, 4, 5, 6, 7, 8}},
		{"onpolicy", streams.ReplayOptions{Subject: "traj.onpolicy"}, []uint64{2, 4, 6, 8}},
		{"from seq", streams.ReplayOptions{Subject: "traj.explore", FromSeq: 4}, []uint64{5, 7}},
		{"from beyond the end", streams.ReplayOptions{Subject: "traj.explore", FromSeq: 100}, nil},
		{"since the past", streams.ReplayOptions{Subject: "traj.explore", Since: time.Now().Add(-time.Hour)}, []uint64{1, 3, 5, 7}},
		{"since the future", streams.ReplayOptions{Subject: "traj.explore", Since: time.Now().Add(time.Hour)}, nil},
		{"empty subject kind", streams.ReplayOptions{Subject: "swapped"}, nil},
		{"empty dlq", streams.ReplayOptions{Subject: "dlq"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Run = "r1"
			var got []uint64
			for _, m := range replayAll(t, js, tt.opts) {
				got = append(got, m.Seq)
			}
			if !reflect.DeepEqual(got, tt.wantSeq) {
				t.Errorf("got seqs %v, want %v", got, tt.wantSeq)
			}
			var wantLast uint64
			if len(tt.wantSeq) > 0 {
				wantLast = tt.wantSeq[len(tt.wantSeq)-1]
			}
			if last, err := streams.LastSeq(context.Background(), js, tt.opts); err != nil || last != wantLast {
				t.Errorf("LastSeq: got %d (%v), want %d", last, err, wantLast)
			}
		})
	}
	if _, err := streams.LastSeq(context.Background(), js, streams.ReplayOptions{Run: "r1", Subject: "nonsense"}); !errors.Is(err, streams.ErrUnknownSubject) {
		t.Errorf("LastSeq of an unknown subject: got %v, want ErrUnknownSubject", err)
	}
}

func TestReplayDecodesEveryKind(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	ev := schemas.Event{Type: schemas.EventCycleStarted, Run: "r1", Cycle: 2, PolicyVersion: 9, Time: time.Unix(1700000000, 0).UTC()}
	if _, err := streams.PublishEvent(ctx, js, ev); err != nil {
		t.Fatal(err)
	}
	if _, err := streams.PublishMetrics(ctx, js, metricsEvent("r1", 4)); err != nil {
		t.Fatal(err)
	}
	sw := streamstest.Trajectory("r1", schemas.SourceExplore, 1)
	sw.Swapped = true
	if _, err := streams.PublishSwapped(ctx, js, sw); err != nil {
		t.Fatal(err)
	}
	if _, err := streams.Publish(ctx, js, "rspo.r1.traj.explore", []byte("garbage"), nats.Header{}); err != nil {
		t.Fatal(err)
	}

	check := func(subject streams.SubjectKind, ok func(streams.Message) bool) {
		t.Helper()
		got := replayAll(t, js, streams.ReplayOptions{Run: "r1", Subject: subject})
		if len(got) != 1 || !ok(got[0]) {
			t.Errorf("replay %s: got %+v, want one decoded message", subject, got)
		}
	}
	check("ctrl", func(m streams.Message) bool { return m.Event != nil && reflect.DeepEqual(*m.Event, ev) })
	check("ctrl.cycle.started", func(m streams.Message) bool { return m.Event != nil })
	check("metrics.learner", func(m streams.Message) bool { return m.Metrics != nil && m.Metrics.Update == 4 })
	check("swapped", func(m streams.Message) bool { return reflect.DeepEqual(m.Trajectory, sw) })
	check("traj.explore", func(m streams.Message) bool {
		return m.Trajectory == nil && errors.Is(m.Err, schemas.ErrDecode) && string(m.Raw) == "garbage"
	})
	if got := replayAll(t, js, streams.ReplayOptions{Run: "r1", Subject: "metrics.actor"}); len(got) != 0 {
		t.Errorf("metrics.actor: got %d messages, want 0", len(got))
	}
}

func TestReplayFollow(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	publishMix(t, js, "r1", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	seen := make(chan uint64, 10)
	errc := make(chan error, 1)
	go func() {
		errc <- streams.Replay(ctx, js, streams.ReplayOptions{Run: "r1", Subject: "traj.onpolicy", Follow: true},
			func(m streams.Message) error { seen <- m.Trajectory.Seq; return nil })
	}()
	if got := <-seen; got != 0 {
		t.Fatalf("first message: got trajectory seq %d, want 0", got)
	}
	if _, err := streams.PublishTrajectory(context.Background(), js, streamstest.Trajectory("r1", schemas.SourceOnPolicy, 1)); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-seen:
		if got != 1 {
			t.Fatalf("live message: got trajectory seq %d, want 1", got)
		}
	case <-ctx.Done():
		t.Fatal("follow did not deliver the live message")
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("Replay with Follow returned %v after cancel, want nil", err)
	}
}

func TestReplayStopsOnCallbackError(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	publishMix(t, js, "r1", 3)
	stop := errors.New("enough")
	n := 0
	err := streams.Replay(context.Background(), js, streams.ReplayOptions{Run: "r1", Subject: "traj"},
		func(streams.Message) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("got %v after %d messages, want the callback's error after 1", err, n)
	}
}

func TestReplayOptionErrors(t *testing.T) {
	tests := []struct {
		name string
		opts streams.ReplayOptions
		want error
	}{
		{"no run", streams.ReplayOptions{Subject: "traj"}, streams.ErrInvalidName},
		{"unknown kind", streams.ReplayOptions{Run: "r", Subject: "buffer"}, streams.ErrUnknownSubject},
		{"work queue", streams.ReplayOptions{Run: "r", Subject: "work.rollout"}, streams.ErrUnknownSubject},
		{"bad source", streams.ReplayOptions{Run: "r", Subject: "traj.other"}, streams.ErrUnknownSubject},
		{"wildcard", streams.ReplayOptions{Run: "r", Subject: "ctrl.*"}, streams.ErrUnknownSubject},
		{"trailing dot", streams.ReplayOptions{Run: "r", Subject: "metrics."}, streams.ErrUnknownSubject},
		{"swapped narrowed", streams.ReplayOptions{Run: "r", Subject: "swapped.x"}, streams.ErrUnknownSubject},
		{"seq and time", streams.ReplayOptions{Run: "r", Subject: "traj", FromSeq: 1, Since: time.Now()}, streams.ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := streams.Replay(context.Background(), nil, tt.opts, nil)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

// silentJS is a JetStream whose first few stream lookups and ordered
// consumer creations go unanswered: they wait for their context to end,
// as a request does that the client buffered while the server restarted
// and the recovering server never answered.
type silentJS struct {
	jetstream.JetStream
	silentStreams, silentConsumers int
}

func (s *silentJS) Stream(ctx context.Context, name string) (jetstream.Stream, error) {
	if s.silentStreams > 0 {
		s.silentStreams--
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.JetStream.Stream(ctx, name)
}

func (s *silentJS) OrderedConsumer(ctx context.Context, stream string, cfg jetstream.OrderedConsumerConfig) (jetstream.Consumer, error) {
	if s.silentConsumers > 0 {
		s.silentConsumers--
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.JetStream.OrderedConsumer(ctx, stream, cfg)
}

// TestReplayRetriesUnansweredRequests: a replay whose JetStream requests
// go unanswered asks again rather than waiting out its caller's deadline
// (a learner's rollout wait once stalled a chaos run this way, right after
// a bus restart).
func TestReplayRetriesUnansweredRequests(t *testing.T) {
	defer func(d time.Duration) { streams.APIRequestTimeout = d }(streams.APIRequestTimeout)
	streams.APIRequestTimeout = 100 * time.Millisecond
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	want := publishMix(t, js, "r1", 3)
	for _, follow := range []bool{false, true} {
		silent := &silentJS{JetStream: js, silentStreams: 2, silentConsumers: 2}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var got int
		err := streams.Replay(ctx, silent, streams.ReplayOptions{Run: "r1", Subject: "traj.explore", Follow: follow},
			func(m streams.Message) error {
				if got++; got == len(want) && follow {
					cancel()
				}
				return nil
			})
		cancel()
		if err != nil || got != len(want) {
			t.Errorf("follow %v: replay returned %v after %d of %d messages", follow, err, got, len(want))
		}
		if silent.silentConsumers != 0 || !follow && silent.silentStreams != 0 {
			t.Errorf("follow %v: %d stream lookups and %d consumer creations left unasked", follow, silent.silentStreams, silent.silentConsumers)
		}
	}
}

// TestReplayGivesUpWithItsCaller: retries end with the caller's context.
func TestReplayGivesUpWithItsCaller(t *testing.T) {
	defer func(d time.Duration) { streams.APIRequestTimeout = d }(streams.APIRequestTimeout)
	streams.APIRequestTimeout = 50 * time.Millisecond
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	publishMix(t, js, "r1", 1)
	silent := &silentJS{JetStream: js, silentStreams: 1 << 30}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err := streams.Replay(ctx, silent, streams.ReplayOptions{Run: "r1", Subject: "traj.explore"}, func(streams.Message) error { return nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the caller's deadline", err)
	}
}

// TestReplayGivesUpOnASilentServer: without a deadline of its caller's, a
// replay whose requests are never answered fails once the retry budget
// has run out, with the request's error, rather than hang.
func TestReplayGivesUpOnASilentServer(t *testing.T) {
	defer func(d, b time.Duration) { streams.APIRequestTimeout, streams.APIRetryBudget = d, b }(streams.APIRequestTimeout, streams.APIRetryBudget)
	streams.APIRequestTimeout, streams.APIRetryBudget = 50*time.Millisecond, 400*time.Millisecond
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	publishMix(t, js, "r1", 1)
	silent := &silentJS{JetStream: js, silentConsumers: 1 << 30}
	done := make(chan error, 1)
	go func() {
		done <- streams.Replay(context.Background(), silent, streams.ReplayOptions{Run: "r1", Subject: "traj.explore", Follow: true},
			func(streams.Message) error { return nil })
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want the unanswered request's deadline", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the replay still waits for a server that never answers")
	}
}
