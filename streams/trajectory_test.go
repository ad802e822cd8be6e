package streams_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"testing"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

func TestPublishTrajectoryTwiceStoresOnce(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	tr := streamstest.Trajectory("r1", schemas.SourceOnPolicy, 3)

	first, err := streams.PublishTrajectory(ctx, js, tr)
	if err != nil {
		t.Fatal(err)
	}
	second, err := streams.PublishTrajectory(ctx, js, tr)
	if err != nil {
		t.Fatal(err)
	}
	if first.Duplicate || !second.Duplicate {
		t.Errorf("got duplicate flags %v, %v; want false, true", first.Duplicate, second.Duplicate)
	}
	if second.Sequence != first.Sequence {
		t.Errorf("second publish got sequence %d, want the first's %d", second.Sequence, first.Sequence)
	}
	st, err := js.Stream(ctx, streams.StreamTraj)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Fatalf("got %d messages in %s, want 1", info.State.Msgs, streams.StreamTraj)
	}
}

func TestPublishTrajectoryHeaders(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	tr := streamstest.Trajectory("r1", schemas.SourceExplore, 5)
	if _, err := streams.PublishTrajectory(ctx, js, tr); err != nil {
		t.Fatal(err)
	}
	m := lastMessage(t, js, streams.StreamTraj, streams.Subjects("r1").TrajExplore)
	want := map[string]string{
		streams.HeaderMsgID:         tr.ID,
		streams.HeaderSchema:        strconv.Itoa(schemas.SchemaVersion),
		streams.HeaderRun:           "r1",
		streams.HeaderCycle:         strconv.FormatInt(tr.Cycle, 10),
		streams.HeaderPolicyVersion: strconv.FormatInt(tr.PolicyVersion, 10),
		streams.HeaderSource:        "explore",
		streams.HeaderContentType:   streams.ContentTypeArrow,
	}
	for k, v := range want {
		if got := m.Header.Get(k); got != v {
			t.Errorf("header %s: got %q, want %q", k, got, v)
		}
	}
	got, err := schemas.DecodeTrajectory(m.Data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, tr) {
		t.Errorf("stored trajectory differs:\ngot  %+v\nwant %+v", got, tr)
	}
}

func TestPublishTrajectoryErrors(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	badRun := streamstest.Trajectory("r1", schemas.SourceOnPolicy, 1)
	badRun.Run = "r.1"
	noSteps := streamstest.Trajectory("r1", schemas.SourceOnPolicy, 1)
	noSteps.Steps = nil
	tests := []struct {
		name string
		pub  func() error
		want error
	}{
		{"nil", func() error { _, err := streams.PublishTrajectory(ctx, js, nil); return err }, schemas.ErrInvalid},
		{"run with a dot", func() error { _, err := streams.PublishTrajectory(ctx, js, badRun); return err }, streams.ErrInvalidName},
		{"no steps", func() error { _, err := streams.PublishTrajectory(ctx, js, noSteps); return err }, schemas.ErrInvalid},
		{"swapped flag unset", func() error {
			_, err := streams.PublishSwapped(ctx, js, streamstest.Trajectory("r1", schemas.SourceExplore, 1))
			return err
		}, streams.ErrNotSwapped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.pub(); !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

// TestSwappedMsgFrom: a record made from its explorer message is the
// message SwappedMsg makes, patched in place; bytes it cannot patch are
// encoded instead; and it refuses what SwappedMsg refuses.
func TestSwappedMsgFrom(t *testing.T) {
	explored := streamstest.Trajectory("r1", schemas.SourceExplore, 4)
	data, err := schemas.EncodeTrajectory(explored)
	if err != nil {
		t.Fatal(err)
	}
	rec := explored.Clone()
	rec.Swapped = true
	for i := range rec.Steps {
		rec.Steps[i].Reward = 0
	}
	rec.Steps[len(rec.Steps)-1].Reward = rec.OutcomeReward
	want, err := streams.SwappedMsg(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		data        []byte
		wantPatched bool
	}{{"explorer message", data, true}, {"not a message", []byte("junk"), false}} {
		m, patched, err := streams.SwappedMsgFrom(rec, tc.data)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if patched != tc.wantPatched || m.Subject != want.Subject || !reflect.DeepEqual(m.Header, want.Header) || string(m.Data) != string(want.Data) {
			t.Errorf("%s: got %s (patched %v) %v, want %s (patched %v) %v and SwappedMsg's bytes",
				tc.name, m.Subject, patched, m.Header, want.Subject, tc.wantPatched, want.Header)
		}
	}
	if _, _, err := streams.SwappedMsgFrom(explored, data); !errors.Is(err, streams.ErrNotSwapped) {
		t.Errorf("unswapped trajectory: got %v, want ErrNotSwapped", err)
	}
	if _, _, err := streams.SwappedMsgFrom(nil, data); !errors.Is(err, schemas.ErrInvalid) {
		t.Errorf("nil trajectory: got %v, want ErrInvalid", err)
	}
}
