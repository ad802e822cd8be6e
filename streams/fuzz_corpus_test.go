package streams

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/schemas"
)

var update = flag.Bool("update", false, "rewrite the files under testdata/ from the current code")

// corpusSeeds returns a valid payload of every decodable kind, by name.
func corpusSeeds(t *testing.T) map[string][2]string {
	t.Helper()
	tr := &schemas.Trajectory{
		ID: "r.explore.p.1", Run: "r", Source: schemas.SourceExplore, Producer: "p", Seq: 1,
		Env: "household", TaskID: "t1", TaskType: "pick", Split: "train", GroupID: "g",
		OutcomeReward: 1, Success: true, CreatedAt: time.Unix(1700000000, 0).UTC(),
		Steps: []schemas.Step{{Observation: "you see a mug", Admissible: []string{"take mug", "look"},
			NumAdmissible: 2, Action: "take mug", BehaviorLogProb: -0.7, Reward: 1, DenseReward: 0.3, StateKey: 9}},
	}
	arrow, err := schemas.EncodeTrajectory(tr)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := schemas.EncodeEvent(schemas.Event{Type: schemas.EventPolicyPublished, Run: "r", Cycle: 1, PolicyVersion: 2, Object: "r/v000000000002"})
	if err != nil {
		t.Fatal(err)
	}
	met, err := schemas.EncodeMetrics(schemas.MetricsEvent{Run: "r", Component: "learner", Kind: "update", Values: map[string]float64{"loss": 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	req, err := schemas.EncodeRolloutRequest(schemas.RolloutRequest{ID: "req-1", Run: "r", Source: schemas.SourceOnPolicy,
		Env: "household", Tasks: []schemas.TaskRef{{ID: "t1"}}, GroupSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	shard, err := schemas.EncodeExploreShard(schemas.ExploreShard{Run: "r", Cycle: 1, PolicyVersion: 3, Shard: 1, Shards: 2,
		TaskStart: 4, TaskEnd: 8})
	if err != nil {
		t.Fatal(err)
	}
	evalShard, err := schemas.EncodeEvalShard(schemas.EvalShard{Run: "r", Update: 3, PolicyVersion: 3, Split: "eval_in_distribution",
		Shard: 1, Shards: 2, EpisodeStart: 1, EpisodeEnd: 2, Episodes: 2, Tasks: []schemas.TaskRef{{ID: "t1", Type: "pick"}}, Seed: 9, Env: "household"})
	if err != nil {
		t.Fatal(err)
	}
	evalResult, err := schemas.EncodeEvalResult(schemas.EvalResult{Run: "r", Update: 3, PolicyVersion: 3, Split: "eval_in_distribution",
		Shard: 1, Shards: 2, EpisodeStart: 1, EpisodeEnd: 2, Episodes: 2, Evaluator: "actor-0",
		Results: []schemas.EvalEpisode{{Type: "pick", Success: true, Score: 1, Steps: 6, Inadmissible: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	return map[string][2]string{
		"trajectory": {"rspo.r.traj.explore", string(arrow)},
		"swapped":    {"rspo.r.swapped", string(arrow)},
		"event":      {"rspo.r.ctrl.policy.published", string(ev)},
		"metrics":    {"rspo.r.metrics.learner", string(met)},
		"rollout":    {"rspo.r.work.rollout", string(req)},
		"shard":      {"rspo.r.work.explore", string(shard)},
		"evalshard":  {"rspo.r.work.eval", string(evalShard)},
		"evalresult": {"rspo.r.eval.3", string(evalResult)},
		"deadletter": {"rspo.r.dlq.swapper", "not arrow"},
	}
}

// TestFuzzCorpus checks that every seed of FuzzMessageDecode still
// decodes with the current decoders (a stale seed would fuzz only the error
// paths); -update rewrites the seeds from the current encoders.
func TestFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzMessageDecode")
	for name, seed := range corpusSeeds(t) {
		path := filepath.Join(dir, name)
		if *update {
			body := fmt.Sprintf("go test fuzz v1\nstring(%s)\n[]byte(%s)\n", strconv.Quote(seed[0]), strconv.Quote(seed[1]))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		subject, raw, err := readCorpusFile(path)
		if err != nil {
			t.Fatalf("%v (regenerate with go test -run TestFuzzCorpus -update)", err)
		}
		m := Message{Subject: subject, Raw: raw}
		m.decode()
		if m.Err != nil {
			t.Errorf("%s no longer decodes: %v (regenerate with go test -run TestFuzzCorpus -update)", path, m.Err)
		}
	}
}

// readCorpusFile parses a two-value corpus file: a string and a []byte.
func readCorpusFile(path string) (string, []byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 || lines[0] != "go test fuzz v1" {
		return "", nil, fmt.Errorf("%s: not a two-value corpus file", path)
	}
	subject, err1 := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "string("), ")"))
	raw, err2 := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[2], "[]byte("), ")"))
	if err := errors.Join(err1, err2); err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	return subject, []byte(raw), nil
}
