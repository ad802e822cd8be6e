package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/prm"
)

// decodeEval runs `rspo eval args... --json` and decodes the result.
func decodeEval(t *testing.T, args ...string) evalResult {
	t.Helper()
	out, _, err := runRspo(testContext(t), append([]string{"eval", "--json"}, args...)...)
	if err != nil {
		t.Fatalf("rspo eval %v: %v", args, err)
	}
	var r evalResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("decoding %q: %v", out, err)
	}
	return r
}

func TestEvalExpertSolvesFixedSplits(t *testing.T) {
	tests := []struct {
		env, split string
		tasks      int
	}{
		{"household", "eval_in_distribution", 140},
		{"household", "eval_out_of_distribution", 134},
		{"shop", "eval", 500},
	}
	for _, tt := range tests {
		t.Run(tt.env+"/"+tt.split, func(t *testing.T) {
			r := decodeEval(t, "--env", tt.env, "--split", tt.split, "--policy", "expert")
			if r.Tasks != tt.tasks || r.Overall.Episodes != tt.tasks {
				t.Errorf("got %d tasks and %d episodes, want %d", r.Tasks, r.Overall.Episodes, tt.tasks)
			}
			if r.Overall.SuccessRate != 1 {
				t.Errorf("expert success %v, want 1", r.Overall.SuccessRate)
			}
			if len(r.ByType) == 0 || len(r.Types) != len(r.ByType) {
				t.Errorf("got types %v and by_type %v, want one entry per type", r.Types, r.ByType)
			}
		})
	}
}

func TestEvalRandomIsReproducible(t *testing.T) {
	args := []string{"--env", "household", "--split", "train", "--policy", "random", "--episodes", "40", "--seed", "5", "--env-opt", "preset=easy"}
	a, b := decodeEval(t, args...), decodeEval(t, args...)
	if a.Overall != b.Overall {
		t.Errorf("same command, different results: %+v vs %+v", a.Overall, b.Overall)
	}
	if a.Overall.Episodes != 40 || a.Options["preset"] != "easy" || a.Seed != 5 {
		t.Errorf("got %+v, want 40 episodes of the easy preset with seed 5", a)
	}
	if a.Overall.MeanSteps <= 0 || a.Overall.MeanSteps > 30 {
		t.Errorf("mean steps %v, want within the easy step limit 30", a.Overall.MeanSteps)
	}
}

// Without --split, eval plays the environment's first held-out split, not
// the train tasks a trained policy has seen.
func TestEvalDefaultsToHeldOutSplit(t *testing.T) {
	for env, want := range map[string]string{"household": "eval_in_distribution", "shop": "eval"} {
		r := decodeEval(t, "--env", env, "--policy", "random", "--episodes", "4")
		if r.Split != want {
			t.Errorf("%s: split %q, want %q", env, r.Split, want)
		}
	}
}

func TestEvalCyclesFixedSplit(t *testing.T) {
	r := decodeEval(t, "--split", "eval_in_distribution", "--policy", "random", "--episodes", "300")
	if r.Tasks != 140 || r.Overall.Episodes != 300 {
		t.Errorf("got %d tasks, %d episodes; want 140 tasks, 300 episodes", r.Tasks, r.Overall.Episodes)
	}
}

// TestEvalFewEpisodesSampleTheSplitsMix: fewer episodes than tasks play
// a sample with the split's task mix, not its first tasks (the household's
// eval splits list their tasks by type, so the first 24 are one or two
// types).
func TestEvalFewEpisodesSampleTheSplitsMix(t *testing.T) {
	whole := decodeEval(t, "--split", "eval_in_distribution", "--policy", "expert")
	few := decodeEval(t, "--split", "eval_in_distribution", "--policy", "expert", "--episodes", "24")
	if few.Overall.Episodes != 24 || few.Tasks != 24 {
		t.Fatalf("got %d episodes of %d tasks, want 24 of 24", few.Overall.Episodes, few.Tasks)
	}
	for typ, st := range whole.ByType {
		want := 24 * float64(st.Episodes) / float64(whole.Overall.Episodes)
		if got := float64(few.ByType[typ].Episodes); got < want-1.5 || got > want+1.5 {
			t.Errorf("%s: %v of 24 episodes, want about %.1f (its share of the split)", typ, got, want)
		}
	}
}

func TestEvalTable(t *testing.T) {
	out, _, err := runRspo(testContext(t), "eval", "--split", "eval_out_of_distribution", "--policy", "expert")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"household  split=eval_out_of_distribution  policy=expert", "pick_heat_then_place", "overall", "100.00%"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestEvalFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown env", []string{"--env", "zoo"}, `unknown environment "zoo"`},
		{"empty split", []string{"--split", ""}, `--split "": household has splits train`},
		{"unknown split", []string{"--split", "valid_seen"}, `--split "valid_seen": household has splits train`},
		{"split of the other env", []string{"--env", "shop", "--split", "eval_in_distribution"}, "shop has splits"},
		{"unknown policy", []string{"--policy", "oracle"}, `--policy "oracle": neither a known policy (expert, random, untrained) nor a snapshot file`},
		{"tilt of a non-policy", []string{"--policy", "expert", "--tilt-prm", "x.prm"}, "--tilt-prm steers a policy"},
		{"missing tilt PRM", []string{"--policy", "untrained", "--tilt-prm", "no-such.prm"}, "--tilt-prm"},
		{"zero tilt", []string{"--policy", "untrained", "--tilt-prm", "x.prm", "--tilt", "0"}, "--tilt 0"},
		{"not a snapshot", []string{"--policy", "eval_test.go"}, "--policy eval_test.go: policy:"},
		{"negative episodes", []string{"--episodes", "-3"}, "--episodes -3"},
		{"bad env option", []string{"--env-opt", "preset=nightmare"}, `unknown preset "nightmare"`},
		{"unknown env option", []string{"--env-opt", "colour=red"}, `unknown option "colour"`},
		{"stray argument", []string{"household"}, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runRspo(testContext(t), append([]string{"eval"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestEvalTrainedPolicySnapshot(t *testing.T) {
	p, err := policy.New(policy.Config{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "policy.rspo")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--env", "household", "--split", "train", "--episodes", "20", "--env-opt", "preset=easy", "--policy", path}
	r := decodeEval(t, args...)
	if r.Overall.Episodes != 20 || r.Policy != path {
		t.Errorf("got %d episodes of policy %q, want 20 of %q", r.Overall.Episodes, r.Policy, path)
	}
	if r.Overall.InadmissibleRate != 0 {
		t.Errorf("a policy choosing among admissible actions took inadmissible ones: %v", r.Overall.InadmissibleRate)
	}
	if again := decodeEval(t, args...); again.Overall != r.Overall {
		t.Errorf("same seed, different result: %+v vs %+v", again.Overall, r.Overall)
	}
}

func TestEvalTiltedUntrainedPolicy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "random.prm")
	if err := prm.SaveFile(path, prm.Random(1)); err != nil {
		t.Fatal(err)
	}
	args := []string{"--split", "train", "--episodes", "20", "--env-opt", "preset=easy", "--policy", "untrained",
		"--tilt-prm", path, "--tilt", "30"}
	tilted := decodeEval(t, args...)
	if !strings.Contains(tilted.Policy, "untrained tilted by") || tilted.Overall.Episodes != 20 {
		t.Fatalf("tilted eval: policy %q, %d episodes", tilted.Policy, tilted.Overall.Episodes)
	}
	if again := decodeEval(t, args...); again.Overall != tilted.Overall {
		t.Errorf("same seed, different result: %+v vs %+v", again.Overall, tilted.Overall)
	}
}
