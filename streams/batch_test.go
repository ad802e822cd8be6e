package streams_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

func trainBatch(run string, obs string) *schemas.TrainBatch {
	return &schemas.TrainBatch{Run: run, Update: 1, PolicyVersion: 0,
		Loss: schemas.BatchLoss{Algo: "grpo", EpsOn: 0.2, EpsOff: 0.1, OffRatio: "behaviour", Alpha: 0.25, WeightOn: 1},
		Steps: []schemas.BatchStep{{TrajectoryID: "a", Observation: obs, Admissible: []string{"look"}, Action: "look",
			BehaviorLogProb: -0.5, Advantage: 1, Weight: 1}}}
}

// TestPublishBatch: a batch is stored once on rspo.<run>.batch in
// RSPO_BATCH (its id dedupes a second publish), replays decoded, and one
// larger than the server's max_payload is refused with ErrTooLarge before
// it is sent.
func TestPublishBatch(t *testing.T) {
	e, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: t.TempDir(), Port: -1, MaxPayload: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	ctx := context.Background()
	nc, js, err := e.Connect(ctx, "batch-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	if err := streams.Ensure(ctx, js, streams.Options{}); err != nil {
		t.Fatal(err)
	}
	b := trainBatch("r1", "You are in a room.")
	for i, dup := range []bool{false, true} {
		ack, err := streams.PublishBatch(ctx, js, b)
		if err != nil {
			t.Fatal(err)
		}
		if ack.Stream != streams.StreamBatch || ack.Duplicate != dup {
			t.Fatalf("publish %d: %+v, want stream %s, duplicate %v", i, ack, streams.StreamBatch, dup)
		}
	}
	var got []*schemas.TrainBatch
	err = streams.Replay(ctx, js, streams.ReplayOptions{Run: "r1", Subject: streams.KindBatch}, func(m streams.Message) error {
		if m.Err != nil {
			return m.Err
		}
		got = append(got, m.Batch)
		return nil
	})
	if err != nil || len(got) != 1 || got[0].ID() != "r1/batch/1" {
		t.Fatalf("replay: %d batches (%v), want the one", len(got), err)
	}
	big := trainBatch("r1", strings.Repeat("x", 60<<10))
	big.Steps = append(big.Steps, big.Steps[0])
	big.Steps[1].Step = 1
	if _, err := streams.PublishBatch(ctx, js, big); !errors.Is(err, streams.ErrTooLarge) {
		t.Fatalf("publishing %d-byte rows: got %v, want ErrTooLarge", 2*60<<10, err)
	}
}
