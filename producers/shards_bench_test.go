package producers

import (
	"context"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// BenchmarkExplorersShareACycle explores one tilted cycle of 12 tasks in
// 2 shards per iteration with 1 or 2 explorers of one episode at a time
// each, and reports the wall seconds per cycle: what a second explorer
// saves when it has a core (or a machine) of its own. On a machine whose
// cores are busy it saves less.
func BenchmarkExplorersShareACycle(b *testing.B) {
	for _, explorers := range []int{1, 2} {
		b.Run(fmt.Sprintf("explorers=%d", explorers), func(b *testing.B) {
			ctx, js := setup(b)
			rctx, stop := context.WithCancel(ctx)
			defer stop()
			for k := range explorers {
				x, err := NewExplorer(js, ExplorerConfig{Run: testRun, Name: fmt.Sprintf("x%d", k), Parallel: 1, Logger: quietLogger()})
				if err != nil {
					b.Fatal(err)
				}
				go x.Run(rctx)
			}
			explored := make(chan struct{}, 16)
			sub, err := js.Conn().Subscribe(streams.Subjects(testRun).Ctrl(schemas.EventCycleExplored), func(*nats.Msg) {
				explored <- struct{}{}
			})
			if err != nil {
				b.Fatal(err)
			}
			defer sub.Unsubscribe()
			plan := schemas.CyclePlan{Env: "household", EnvOptions: easy, Tasks: trainTasks(b, 12), Seed: 3, ExploreSettings: schemas.ExploreSettings{GroupSize: 1, Collect: 16, Mode: schemas.ExplorerRandomPRM, Tilt: 3, Shards: 2}}
			b.ResetTimer()
			for i := range b.N {
				publishCycle(b, ctx, js, int64(i), plan)
				for range plan.Shards {
					select {
					case <-explored:
					case <-ctx.Done():
						b.Fatalf("cycle %d not explored: %v", i, ctx.Err())
					}
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/cycle")
			b.ReportMetric(float64(b.N*len(plan.Tasks)*plan.Collect)/b.Elapsed().Seconds(), "episodes/s")
		})
	}
}
