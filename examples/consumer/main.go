// Command consumer is a consumer of a recorded run of one's own, against a
// real server: it connects with streams.Connect, replays a run's on-policy
// trajectories and prints the success rate per task type — a figure the
// paper does not report. Start from it to analyse runs your own way.
//
//	rspo serve nats --data runs/nats &             # the store rspo run used
//	go run ./examples/consumer --nats nats://127.0.0.1:4222 --run household-gigpo-rspo-prm-tilt-s1
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"os"
	"os/signal"
	"slices"

	"github.com/rspo-dev/rspo/streams"
)

func main() {
	url := flag.String("nats", cmp.Or(os.Getenv("NATS_URL"), "nats://127.0.0.1:4222"), "server URL")
	run := flag.String("run", "", "run name (required)")
	flag.Parse()
	if *run == "" {
		log.Fatal("consumer: give --run NAME (rspo runs lists them)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := successByTaskType(ctx, *url, *run, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// successByTaskType prints, for each task type of run's on-policy
// trajectories stored on the server at url, the episodes and success rate.
func successByTaskType(ctx context.Context, url, run string, w io.Writer) error {
	nc, js, err := streams.Connect(ctx, url, streams.ConnectOptions{Name: "rspo-example-consumer"})
	if err != nil {
		return err
	}
	defer nc.Close()
	type tally struct{ episodes, successes int }
	byType := map[string]*tally{}
	skipped := 0
	err = streams.Replay(ctx, js, streams.ReplayOptions{Run: run, Subject: streams.KindTrajOnPolicy}, func(m streams.Message) error {
		if m.Err != nil {
			skipped++ // a message that does not decode: count it, do not stop
			return nil
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
		return err
	}
	if len(byType) == 0 {
		return fmt.Errorf("consumer: run %s has no on-policy trajectories on %s", run, url)
	}
	for _, typ := range slices.Sorted(maps.Keys(byType)) {
		t := byType[typ]
		fmt.Fprintf(w, "%-24s %5d episodes  success %.3f\n", typ, t.episodes, float64(t.successes)/float64(t.episodes))
	}
	if skipped > 0 {
		fmt.Fprintf(w, "(%d messages did not decode)\n", skipped)
	}
	return nil
}
