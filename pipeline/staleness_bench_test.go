package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// BenchmarkMaxStaleness trains the base algorithm on the medium preset for
// 10 updates, synchronously (S=0) and pipelined (S=1), and reports a run's
// wall seconds and the seconds its learner waited for rollouts and spent
// in updates (summed over the updates). Run the two interleaved and on an
// idle machine: the actors and the learner share its cores.
//
//	go test ./pipeline -run '^$' -bench MaxStaleness -benchtime 3x
func BenchmarkMaxStaleness(b *testing.B) {
	for _, s := range []int{0, 1} {
		b.Run(fmt.Sprintf("S=%d", s), func(b *testing.B) {
			var wait, update float64
			start := time.Now()
			for i := range b.N {
				srv := streamstest.RunServer(b)
				_, js := streamstest.Connect(b, srv)
				o := DefaultOptions()
				o.Recipe = RecipePaper
				o, err := o.WithRecipe(func(string) bool { return false })
				if err != nil {
					b.Fatal(err)
				}
				o.Run, o.RSPO, o.EnvOptions, o.Updates, o.Seed, o.MaxStaleness = "bench", false, map[string]string{"preset": "medium"}, 10, int64(i+1), s
				o.Data = b.TempDir()
				cfg, err := o.Config()
				if err != nil {
					b.Fatal(err)
				}
				cfg.NATSURL = srv.ClientURL()
				cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
				if _, err := Run(context.Background(), cfg); err != nil {
					b.Fatal(err)
				}
				err = streams.Replay(context.Background(), js, streams.ReplayOptions{Run: "bench", Subject: "metrics.learner"}, func(m streams.Message) error {
					if m.Metrics != nil && m.Metrics.Kind == "update" {
						wait += m.Metrics.Values["seconds_rollouts"]
						update += m.Metrics.Values["seconds_update"]
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			n := float64(b.N)
			b.ReportMetric(time.Since(start).Seconds()/n, "s/run")
			b.ReportMetric(wait/n, "rollout-wait-s/run")
			b.ReportMetric(update/n, "update-s/run")
			b.ReportMetric(0, "ns/op")
		})
	}
}
