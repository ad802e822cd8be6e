package prm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rspo-dev/rspo/prm/prmtest"
	"github.com/rspo-dev/rspo/schemas"
)

func TestScoreStepsBatchMatchesSingle(t *testing.T) {
	m := Random(3)
	trajs, _ := prmtest.Decisive("test", 1, 5, 7)
	batch := m.ScoreBatch(trajs)
	for i, tr := range trajs {
		single := m.ScoreSteps(tr)
		if len(single) != len(tr.Steps) || len(batch[i]) != len(tr.Steps) {
			t.Fatalf("trajectory %d: got %d and %d scores, want %d", i, len(single), len(batch[i]), len(tr.Steps))
		}
		var sum float64
		for k := range single {
			if single[k] != batch[i][k] {
				t.Errorf("trajectory %d step %d: batch %v, single %v", i, k, batch[i][k], single[k])
			}
			if math.Abs(single[k]) >= 1 {
				t.Errorf("score %v outside (−1, 1)", single[k])
			}
			sum += single[k]
		}
		if got := m.Score(tr); got != sum {
			t.Errorf("Score: got %v, want Σ r̂_t = %v", got, sum)
		}
	}
}

func TestRandomControlIsDeterministicAndNotFlat(t *testing.T) {
	trajs, _ := prmtest.Decisive("test", 2, 1, 20)
	a, b, c := Random(1).ScoreSteps(trajs[0]), Random(1).ScoreSteps(trajs[0]), Random(2).ScoreSteps(trajs[0])
	var spread float64
	for k := range a {
		if a[k] != b[k] {
			t.Fatalf("same seed, step %d: got %v and %v", k, a[k], b[k])
		}
		spread = math.Max(spread, math.Abs(a[k]-a[0]))
	}
	if spread < 0.05 {
		t.Errorf("random PRM is flat: largest step difference %v", spread)
	}
	if a[0] == c[0] && a[1] == c[1] {
		t.Errorf("seeds 1 and 2 give the same scores")
	}
}

func TestWithNoise(t *testing.T) {
	m := Random(1)
	trajs, _ := prmtest.Decisive("test", 3, 1, 2000)
	clean := m.ScoreSteps(trajs[0])
	tests := []struct {
		name  string
		sigma float64
		rng   *rand.Rand
	}{
		{"off", 0, newTestRand(1)},
		{"nil source", 0.3, nil},
		{"sigma 0.1", 0.1, newTestRand(1)},
		{"sigma 0.3", 0.3, newTestRand(2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noisy := m.ScoreSteps(trajs[0], WithNoise(tt.sigma, tt.rng))
			var ss float64
			for k := range noisy {
				d := noisy[k] - clean[k]
				ss += d * d
			}
			want := tt.sigma
			if tt.rng == nil {
				want = 0
			}
			if got := math.Sqrt(ss / float64(len(noisy))); math.Abs(got-want) > 0.1*want+1e-12 {
				t.Errorf("noise sd: got %.4f, want %.4f", got, want)
			}
		})
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	if _, err := New(nil, ModelConfig{}); err == nil {
		t.Error("nil featurizer: got no error")
	}
	if _, err := New(DefaultFeaturizer(), ModelConfig{Hidden: -3}); err == nil {
		t.Error("negative hidden width: got no error")
	}
}

func TestScoreEmptyTrajectory(t *testing.T) {
	if got := Random(1).ScoreSteps(&schemas.Trajectory{}); len(got) != 0 {
		t.Errorf("got %d scores, want 0", len(got))
	}
}

// ScoreActions at a state must give each candidate the score the step
// would get with that action taken: the per-step scores of ScoreSteps.
func TestScoreActionsMatchesTheTakenStepsScore(t *testing.T) {
	m := Random(5)
	trajs, _ := prmtest.Decisive("test", 3, 3, 6)
	cands := append([]string{prmtest.SuccessAction, prmtest.FailureAction}, prmtest.NeutralActions...)
	for _, tr := range trajs {
		steps := m.ScoreSteps(tr)
		for k, st := range tr.Steps {
			got := make([]float64, len(cands))
			m.ScoreActions(tr.Instruction, st.Observation, cands, got)
			found := false
			for a, c := range cands {
				if c == st.Action {
					found = true
					if got[a] != steps[k] {
						t.Fatalf("step %d action %q: ScoreActions %v, ScoreSteps %v", k, c, got[a], steps[k])
					}
				}
			}
			if !found {
				t.Fatalf("step %d: action %q not among the candidates", k, st.Action)
			}
		}
	}
	// A trained PRM must prefer the decisive success action at acting time.
	train, _ := prmtest.Decisive("train", 4, 400, 6)
	trained, _, err := Train(t.Context(), train, TrainConfig{})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float64, len(cands))
	trained.ScoreActions(trajs[0].Instruction, trajs[0].Steps[0].Observation, cands, got)
	for a := 1; a < len(cands); a++ {
		if got[0] <= got[a] {
			t.Fatalf("trained PRM scores %q %v, not above %q %v", cands[0], got[0], cands[a], got[a])
		}
	}
}

// TestScoreBatchChunksScoreAsOneProduct checks that scoring in chunks gives
// bit for bit the scores of evaluating every row in one product, for
// batches around the chunk size and the size at which gonum's Gemm
// switches to blocks.
func TestScoreBatchChunksScoreAsOneProduct(t *testing.T) {
	for _, hidden := range []int{16, 100} {
		m, err := New(DefaultFeaturizer(), ModelConfig{Hidden: hidden, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		for _, rows := range []int{1, 63, 255, 256, 1024, 1025, 1024 + 255, 1024 + 256, 3*1024 + 100} {
			trajs := householdLike(1, rows, uint64(rows))
			got := m.ScoreBatch(trajs)[0]
			x := make([]float32, rows*m.dim)
			for i, s := range trajs[0].Steps {
				m.feat.Features(trajs[0].Instruction, s.Observation, s.Action, x[i*m.dim:(i+1)*m.dim])
			}
			want := make([]float64, rows)
			m.forwardRows(toFloat64(nil, x), rows, make([]float64, rows*hidden), want)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("hidden %d, %d rows: row %d scored %v, one product gives %v", hidden, rows, i, got[i], want[i])
				}
			}
		}
	}
}

// Scoring a state's actions, which an explorer does at every step, reuses
// its scratch: nothing is allocated once it is warm.
func TestScoreActionsAllocatesNothing(t *testing.T) {
	m := Random(5)
	tr := householdLike(1, 1, 6)[0]
	actions := []string{"take mug 1 from desk 1", "go to desk 1", "open drawer 2", "look", "inventory", "put mug 1 in/on shelf 3"}
	dst := make([]float64, len(actions))
	m.ScoreActions(tr.Instruction, tr.Steps[0].Observation, actions, dst) // warm the scratch
	if n := testing.AllocsPerRun(100, func() {
		m.ScoreActions(tr.Instruction, tr.Steps[0].Observation, actions, dst)
	}); n > 0 {
		t.Errorf("ScoreActions allocates %v times a call, want 0", n)
	}
}
