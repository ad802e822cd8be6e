package streams_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"slices"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// An analysis consumer needs nothing from the pipeline but the run name:
// it replays the on-policy stream and computes the success rate per task
// type, a figure the paper does not report.
func ExampleReplay_successRateByTaskType() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "rspo-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: dir, Port: -1})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown()
	nc, js, err := srv.Connect(ctx, "example")
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	if err := streams.Ensure(ctx, js, streams.Options{}); err != nil {
		log.Fatal(err)
	}

	// The actors of a run would publish these; here, ten made-up episodes.
	for seq := range uint64(10) {
		if _, err := streams.PublishTrajectory(ctx, js, streamstest.Trajectory("demo", schemas.SourceOnPolicy, seq)); err != nil {
			log.Fatal(err)
		}
	}

	// The consumer: replay what is stored, then stop.
	type tally struct{ episodes, successes int }
	byType := map[string]*tally{}
	err = streams.Replay(ctx, js, streams.ReplayOptions{Run: "demo", Subject: "traj.onpolicy"},
		func(m streams.Message) error {
			if m.Err != nil {
				return m.Err
			}
			t := byType[m.Trajectory.TaskType]
			if t == nil {
				t = &tally{}
				byType[m.Trajectory.TaskType] = t
			}
			t.episodes++
			if m.Trajectory.Success {
				t.successes++
			}
			return nil
		})
	if err != nil {
		log.Fatal(err)
	}
	types := make([]string, 0, len(byType))
	for k := range byType {
		types = append(types, k)
	}
	slices.Sort(types)
	for _, k := range types {
		t := byType[k]
		fmt.Printf("%-6s %d/%d = %.2f\n", k, t.successes, t.episodes, float64(t.successes)/float64(t.episodes))
	}
	// Output:
	// clean  2/3 = 0.67
	// heat   1/3 = 0.33
	// pick   2/4 = 0.50
}
