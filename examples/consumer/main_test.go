package main

import (
	"context"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// The consumer reads a run from a server by URL, as it would a real one.
func TestConsumerReadsARunFromAServer(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	for seq := range uint64(6) {
		if _, err := streams.PublishTrajectory(ctx, js, streamstest.Trajectory("demo", schemas.SourceOnPolicy, seq)); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	if err := successByTaskType(ctx, s.ClientURL(), "demo", &out); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "episodes"); n == 0 {
		t.Fatalf("no task types printed:\n%s", out.String())
	}
	if err := successByTaskType(ctx, s.ClientURL(), "no-such-run", &out); err == nil || !strings.Contains(err.Error(), "no on-policy trajectories") {
		t.Errorf("a run that is not there: got %v", err)
	}
}
