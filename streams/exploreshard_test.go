package streams_test

import (
	"context"
	"testing"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// A learner that queues a cycle's shards again (a restart within the
// cycle) queues each once; two shards of one cycle, and the shards of
// two cycles' events, stay apart.
func TestPublishExploreShardTwiceQueuesOnce(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	plan := schemas.CyclePlan{Tasks: make([]schemas.TaskRef, 4), ExploreSettings: schemas.ExploreSettings{Shards: 2}}
	shards := schemas.ShardsOf("r1", 3, 9, plan)
	for round := range 2 {
		for _, sh := range shards {
			ack, err := streams.PublishExploreShard(ctx, js, sh)
			if err != nil {
				t.Fatal(err)
			}
			if ack.Duplicate != (round == 1) {
				t.Errorf("round %d, shard %d: duplicate %v", round, sh.Shard, ack.Duplicate)
			}
		}
	}
	st, err := js.Stream(ctx, streams.StreamWork)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 2 {
		t.Fatalf("got %d messages in %s, want the 2 shards", info.State.Msgs, streams.StreamWork)
	}
	if _, err := streams.PublishExploreShard(ctx, js, schemas.ExploreShard{Run: "r1"}); err == nil {
		t.Error("an invalid shard was queued")
	}
}

// Each shard's cycle.explored has its own message id, so the shards of a
// cycle are all stored; an unsharded one keeps the id it always had.
func TestEventIDOfShards(t *testing.T) {
	e := schemas.Event{Type: schemas.EventCycleExplored, Run: "r1", Cycle: 2, PolicyVersion: 6}
	if got, want := streams.EventID(e), "r1/ctrl/cycle.explored/c2/p6/m0/u0"; got != want {
		t.Errorf("unsharded: got %s, want %s", got, want)
	}
	e.Shards = 1
	if got, want := streams.EventID(e), "r1/ctrl/cycle.explored/c2/p6/m0/u0"; got != want {
		t.Errorf("one shard: got %s, want %s", got, want)
	}
	e.Shard, e.Shards = 1, 3
	if got, want := streams.EventID(e), "r1/ctrl/cycle.explored/c2/p6/m0/u0/s1of3"; got != want {
		t.Errorf("shard 1 of 3: got %s, want %s", got, want)
	}
}
