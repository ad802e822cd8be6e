package pipeline_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	_ "github.com/rspo-dev/rspo/envs/household"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/streams"
)

// A stage of your own runs beside the built-in ones of an in-process run,
// on the same connection: here an analysis that, once the run has
// finished, reads the run's on-policy trajectories from their stream.
func ExampleConfig_extra() {
	dir, err := os.MkdirTemp("", "rspo-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	const run = "example"
	analysis := func(bus pipeline.Bus) (pipeline.Stage, error) {
		return pipeline.Stage{Name: "analysis", Run: func(ctx context.Context) error {
			<-ctx.Done() // the run has finished: every trajectory is stored
			var n, successes int
			err := streams.Replay(context.Background(), bus.JS, streams.ReplayOptions{Run: run, Subject: streams.KindTrajOnPolicy},
				func(m streams.Message) error {
					if m.Trajectory != nil {
						n++
						if m.Trajectory.Success {
							successes++
						}
					}
					return nil
				})
			fmt.Printf("analysis: %d on-policy trajectories, %d successful\n", n, successes)
			return err
		}}, nil
	}
	cfg := pipeline.Config{
		Learner: learnersvc.Config{Run: run, EnvOptions: map[string]string{"preset": "easy"},
			Updates: 1, Tasks: 2, GroupSize: 2, EvalEvery: -1, EvalEpisodes: 2},
		DataDir: dir,
		Extra:   []pipeline.StageFunc{analysis},
		Logger:  slog.New(slog.DiscardHandler),
	}
	if _, err := pipeline.Run(context.Background(), cfg); err != nil {
		panic(err)
	}
	// Output: analysis: 4 on-policy trajectories, 0 successful
}
