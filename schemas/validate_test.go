package schemas

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// TestValidate checks every validation rule twice: on the struct (Validate)
// and on the wire (DecodeTrajectory of the invalid trajectory written
// without validation). Both must name the same field.
func TestValidate(t *testing.T) {
	long := strings.Repeat("x", MaxTextBytes+1)
	tests := []struct {
		name      string
		modify    func(*Trajectory)
		wantField string
		// noWire marks invalid values that the wire cannot carry.
		noWire bool
	}{
		{"empty id", func(tr *Trajectory) { tr.ID = "" }, "id", false},
		{"id with space", func(tr *Trajectory) { tr.ID = "a b" }, "id", false},
		{"id with newline", func(tr *Trajectory) { tr.ID = "a\nb" }, "id", false},
		{"id too long", func(tr *Trajectory) { tr.ID = long }, "id", false},
		{"empty run", func(tr *Trajectory) { tr.Run = "" }, "run", false},
		{"run with dot", func(tr *Trajectory) { tr.Run = "a.b" }, "run", false},
		{"run with wildcard", func(tr *Trajectory) { tr.Run = "a*" }, "run", false},
		{"run too long", func(tr *Trajectory) { tr.Run = strings.Repeat("r", MaxRunNameBytes+1) }, "run", false},
		{"unknown source", func(tr *Trajectory) { tr.Source = "offpolicy" }, "source", false},
		{"empty source", func(tr *Trajectory) { tr.Source = "" }, "source", false},
		{"negative cycle", func(tr *Trajectory) { tr.Cycle = -1 }, "cycle", false},
		{"negative policy version", func(tr *Trajectory) { tr.PolicyVersion = -1 }, "policy_version", false},
		{"outcome above 1", func(tr *Trajectory) { tr.OutcomeReward = 1.5 }, "outcome_reward", false},
		{"outcome below 0", func(tr *Trajectory) { tr.OutcomeReward = -0.1 }, "outcome_reward", false},
		{"outcome NaN", func(tr *Trajectory) { tr.OutcomeReward = math.NaN() }, "outcome_reward", false},
		{"created_at beyond 2262", func(tr *Trajectory) { tr.CreatedAt = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) }, "created_at", true},
		{"producer not UTF-8", func(tr *Trajectory) { tr.Producer = "\xff" }, "producer", false},
		{"instruction too long", func(tr *Trajectory) { tr.Instruction = long }, "instruction", false},
		{"group id too long", func(tr *Trajectory) { tr.GroupID = long }, "group_id", false},
		{"no steps", func(tr *Trajectory) { tr.Steps = nil }, "steps", false},
		{"too many steps", func(tr *Trajectory) { tr.Steps = make([]Step, MaxSteps+1) }, "steps", false},
		{"negative distinct states", func(tr *Trajectory) { tr.DistinctStates = -1 }, "distinct_states", false},
		{"negative repeated visits", func(tr *Trajectory) { tr.RepeatedVisits = -1 }, "repeated_visits", false},
		{"state counts exceed steps", func(tr *Trajectory) { tr.DistinctStates, tr.RepeatedVisits = 3, 1 }, "distinct_states", false},
		{"observation too long", func(tr *Trajectory) { tr.Steps[2].Observation = long }, "steps[2].observation", false},
		{"action not UTF-8", func(tr *Trajectory) { tr.Steps[1].Action = "\xc3" }, "steps[1].action", false},
		{"too many admissible", func(tr *Trajectory) {
			tr.Steps[0].Admissible = make([]string, MaxAdmissible+1)
			tr.Steps[0].Admissible[0] = tr.Steps[0].Action
			tr.Steps[0].NumAdmissible = MaxAdmissible + 1
		}, "steps[0].admissible", false},
		{"admissible action too long", func(tr *Trajectory) { tr.Steps[0].Admissible[1] = long }, "steps[0].admissible[1]", false},
		{"num_admissible below list", func(tr *Trajectory) { tr.Steps[0].NumAdmissible = 2 }, "steps[0].num_admissible", false},
		{"negative num_admissible", func(tr *Trajectory) { tr.Steps[1].NumAdmissible = -1 }, "steps[1].num_admissible", false},
		{"action_index below -1", func(tr *Trajectory) { tr.Steps[0].ActionIndex = -2 }, "steps[0].action_index", false},
		{"action_index past list", func(tr *Trajectory) { tr.Steps[0].ActionIndex = 3 }, "steps[0].action_index", false},
		{"admissible[action_index] is another action", func(tr *Trajectory) { tr.Steps[0].ActionIndex = 1 }, "steps[0].action_index", false},
		{"action_index past num_admissible", func(tr *Trajectory) { tr.Steps[1].ActionIndex = 4 }, "steps[1].action_index", false},
		{"action_index without any count", func(tr *Trajectory) { tr.Steps[1].NumAdmissible, tr.Steps[1].ActionIndex = 0, 0 }, "steps[1].action_index", false},
		{"positive behaviour log-prob", func(tr *Trajectory) { tr.Steps[1].BehaviorLogProb = 0.01 }, "steps[1].behavior_log_prob", false},
		{"NaN behaviour log-prob", func(tr *Trajectory) { tr.Steps[1].BehaviorLogProb = math.NaN() }, "steps[1].behavior_log_prob", false},
		{"-Inf behaviour log-prob", func(tr *Trajectory) { tr.Steps[1].BehaviorLogProb = math.Inf(-1) }, "steps[1].behavior_log_prob", false},
		{"infinite reward", func(tr *Trajectory) { tr.Steps[2].Reward = math.Inf(1) }, "steps[2].reward", false},
		{"NaN dense reward", func(tr *Trajectory) { tr.Steps[0].DenseReward = math.NaN() }, "steps[0].dense_reward", false},
		{"too many tokens", func(tr *Trajectory) {
			tr.Steps[1].TokenIDs, tr.Steps[1].TokenLogProbs = make([]int32, MaxTokens+1), nil
		}, "steps[1].token_ids", false},
		{"negative token id", func(tr *Trajectory) { tr.Steps[1].TokenIDs[0] = -5 }, "steps[1].token_ids[0]", false},
		{"log-probs not one per token", func(tr *Trajectory) { tr.Steps[1].TokenLogProbs = []float32{-1} }, "steps[1].token_log_probs", false},
		{"positive token log-prob", func(tr *Trajectory) { tr.Steps[1].TokenLogProbs[1] = 0.5 }, "steps[1].token_log_probs[1]", false},
		{"NaN token log-prob", func(tr *Trajectory) { tr.Steps[1].TokenLogProbs[2] = float32(math.NaN()) }, "steps[1].token_log_probs[2]", false},
		{"message too large", func(tr *Trajectory) {
			tr.Steps = make([]Step, MaxMessageBytes/MaxTextBytes+1)
			for i := range tr.Steps {
				tr.Steps[i] = Step{Observation: long[:MaxTextBytes], ActionIndex: -1}
			}
			tr.DistinctStates, tr.RepeatedVisits = 0, 0
		}, "trajectory", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := fixture()
			tc.modify(tr)
			checkField(t, "Validate", tr.Validate(), tc.wantField)
			if _, err := EncodeTrajectory(tr); !errors.Is(err, ErrInvalid) {
				t.Errorf("EncodeTrajectory: got %v, want ErrInvalid", err)
			}
			if tc.noWire {
				return
			}
			_, err := DecodeTrajectory(rawEncode(t, tr))
			checkField(t, "DecodeTrajectory", err, tc.wantField)
		})
	}
}

func checkField(t *testing.T, what string, err error, wantField string) {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("%s: got %v, want a *ValidationError for %s", what, err, wantField)
	}
	if ve.Field != wantField {
		t.Errorf("%s: got field %q (%v), want %q", what, ve.Field, err, wantField)
	}
	if !errors.Is(err, ErrInvalid) || errors.Is(err, ErrDecode) || errors.Is(err, ErrSchemaVersion) {
		t.Errorf("%s: %v matches the wrong sentinels", what, err)
	}
}

func TestValidateNil(t *testing.T) {
	var tr *Trajectory
	checkField(t, "Validate(nil)", tr.Validate(), "trajectory")
	if _, err := EncodeTrajectory(nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("EncodeTrajectory(nil): got %v, want ErrInvalid", err)
	}
}

func TestValidateAccepts(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Trajectory)
	}{
		{"fixture", func(*Trajectory) {}},
		{"inadmissible action", func(tr *Trajectory) { tr.Steps[0].ActionIndex, tr.Steps[0].Action = -1, "dance" }},
		{"no list, unknown count", func(tr *Trajectory) { tr.Steps[1].NumAdmissible, tr.Steps[1].ActionIndex = 0, -1 }},
		{"zero time", func(tr *Trajectory) { tr.CreatedAt = time.Time{} }},
		{"earliest time", func(tr *Trajectory) { tr.CreatedAt = time.Unix(0, math.MinInt64) }},
		{"text at the limit", func(tr *Trajectory) { tr.Instruction = strings.Repeat("é", MaxTextBytes/2) }},
		{"run name charset", func(tr *Trajectory) { tr.Run = "Exp_2026-07-01" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := fixture()
			tc.modify(tr)
			if err := tr.Validate(); err != nil {
				t.Errorf("Validate: got %v, want nil", err)
			}
		})
	}
}

func TestCheckRunName(t *testing.T) {
	tests := []struct {
		run  string
		want bool
	}{
		{"a", true}, {"run-1_B", true}, {strings.Repeat("x", MaxRunNameBytes), true},
		{"", false}, {"a.b", false}, {"a b", false}, {"a>", false}, {"a/b", false}, {"é", false},
		{strings.Repeat("x", MaxRunNameBytes+1), false},
	}
	for _, tc := range tests {
		err := CheckRunName(tc.run)
		if got := err == nil; got != tc.want {
			t.Errorf("CheckRunName(%q): got %v, want ok=%v", tc.run, err, tc.want)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckRunName(%q): %v does not match ErrInvalid", tc.run, err)
		}
	}
}
