package pipeline

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// evalRun trains cfg on a server of its own with its evaluations split
// into shards (1: in the learner) and played by actors actors, and returns
// the final figures, every eval metrics event's values by split and
// update, and the shards answered on the run's eval subjects.
func evalRun(t *testing.T, cfg Config, shards, actors int) (final map[string]float64, evals map[string]map[string]float64, answered int) {
	t.Helper()
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	cfg.NATSURL, cfg.DataDir = s.ClientURL(), t.TempDir()
	cfg.Learner.EvalShards, cfg.Actors = shards, actors
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	evals = map[string]map[string]float64{} // "<split>#<i>": the split's i-th evaluation
	seen := map[string]int{}
	err = streams.Replay(context.Background(), js, streams.ReplayOptions{Run: cfg.Learner.Run, Subject: "metrics.learner"},
		func(m streams.Message) error {
			if m.Metrics != nil && m.Metrics.Kind == "eval" {
				split := m.Metrics.Labels["split"]
				evals[fmt.Sprintf("%s#%d", split, seen[split])] = m.Metrics.Values
				seen[split]++
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	err = streams.Replay(context.Background(), js, streams.ReplayOptions{Run: cfg.Learner.Run, Subject: streams.KindEval},
		func(m streams.Message) error {
			if m.EvalResult == nil {
				t.Errorf("undecodable eval result: %v", m.Err)
			} else if m.EvalResult.Shards != shards {
				t.Errorf("eval result of shard %d of %d, want of %d", m.EvalResult.Shard, m.EvalResult.Shards, shards)
			}
			answered++
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return sum.Final, evals, answered
}

// Evaluations split into 2 and 3 shards, played by two actors, give
// exactly the figures — overall and per task type, at every evaluation of
// the run — that the learner's in-process evaluation gives.
func TestShardedEvaluationGivesTheInProcessFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	cfg := smallRun(t, "", false)
	final1, evals1, answered1 := evalRun(t, cfg, 1, 1)
	if answered1 != 0 {
		t.Errorf("in-process evaluation: %d eval results on the bus, want none", answered1)
	}
	// 4 updates, eval every 2 and at the end: updates 2 and 4, two splits each.
	if len(evals1) != 4 || len(final1) == 0 {
		t.Fatalf("in-process run: %d eval events %v, final %v; want 4 and figures", len(evals1), evals1, final1)
	}
	for _, shards := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d shards", shards), func(t *testing.T) {
			final, evals, answered := evalRun(t, cfg, shards, 2)
			if !reflect.DeepEqual(final, final1) {
				t.Errorf("final figures: got %v, want the in-process %v", final, final1)
			}
			if !reflect.DeepEqual(evals, evals1) {
				t.Errorf("eval events:\n got %v\nwant %v", evals, evals1)
			}
			if want := 2 * 2 * shards; answered != want {
				t.Errorf("eval results on the bus: %d, want %d (2 evaluations × 2 splits × %d shards)", answered, want, shards)
			}
		})
	}
}
