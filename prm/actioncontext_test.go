package prm

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rspo-dev/rspo/schemas"
)

// shopLikeProducts are the lines a results page shows: a title and a price.
var shopLikeProducts = []struct{ title, price string }{
	{"red cotton shirt", "$12.99"}, {"blue wool hat", "$8.50"}, {"green silk scarf", "$21.00"},
	{"black leather belt", "$30.00"}, {"white linen towel", "$6.25"}, {"yellow rain coat", "$44.00"},
}

// resultsPage draws a one-step episode in the shape of the shop's results
// page: items listed by random ids, the instruction naming one item, and
// the episode succeeding when the chosen id is that item's. It returns the
// trajectory and the admissible click actions with the target's index.
func resultsPage(rng *rand.Rand, id string, choose int) (*schemas.Trajectory, []string, int) {
	order := rng.Perm(len(shopLikeProducts))[:4]
	target := rng.IntN(len(order))
	obs := "[button] Back to Search [button_]\n"
	actions := make([]string, len(order))
	for i, p := range order {
		item := fmt.Sprintf("b%08x", rng.Uint32())
		obs += fmt.Sprintf("[button] %s [button_] %s [SEP] %s\n", item, shopLikeProducts[p].title, shopLikeProducts[p].price)
		actions[i] = "click[" + item + "]"
	}
	if choose < 0 {
		choose = rng.IntN(len(actions))
	}
	t := &schemas.Trajectory{
		ID: id, Run: "test", Source: schemas.SourceOnPolicy, Producer: "test", Env: "synthetic",
		TaskID: "synthetic/train/" + id, TaskType: "buy", Split: "train", GroupID: id,
		Instruction: "i am looking for a " + shopLikeProducts[order[target]].title,
		Steps:       []schemas.Step{{Observation: obs, Action: actions[choose], ActionIndex: -1}},
	}
	if choose == target {
		t.Success, t.OutcomeReward, t.Steps[0].Reward = true, 1, 1
	}
	return t, actions, target
}

// TestActionContextLinksOpaqueIDsToTheirLines is why ActionContext exists:
// when an action names its object only by an id (click[b0smym5jgl]), a
// PRM can learn which click leads to success only from the line of the
// observation that the id labels. Trained on random clicks of results
// pages, the PRM with ActionContext ranks the instruction's item first on
// pages with ids it never saw; without it, it cannot do better than chance.
func TestActionContextLinksOpaqueIDsToTheirLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	var train []*schemas.Trajectory
	for i := range 1200 {
		tr, _, _ := resultsPage(rng, fmt.Sprintf("t%d", i), -1)
		train = append(train, tr)
	}
	for _, tc := range []struct {
		name    string
		context bool
		atLeast float64
		atMost  float64
	}{
		{"with action context", true, 0.9, 1},
		{"without", false, 0, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			feat, err := NewHashProjection(HashProjectionConfig{ActionContext: tc.context})
			if err != nil {
				t.Fatal(err)
			}
			m, _, err := Train(context.Background(), train, TrainConfig{Seed: 1, Target: TargetStep, Featurizer: feat})
			if err != nil {
				t.Fatal(err)
			}
			test := rand.New(rand.NewPCG(8, 1))
			hits, n := 0, 400
			for i := range n {
				tr, actions, target := resultsPage(test, fmt.Sprintf("e%d", i), 0)
				scores := make([]float64, len(actions))
				m.ScoreActions(tr.Instruction, tr.Steps[0].Observation, actions, scores)
				best := 0
				for k := range scores {
					if scores[k] > scores[best] {
						best = k
					}
				}
				if best == target {
					hits++
				}
			}
			rate := float64(hits) / float64(n)
			t.Logf("target ranked first on %.3f of unseen pages (chance 0.25)", rate)
			if rate < tc.atLeast || rate > tc.atMost {
				t.Errorf("the target item ranked first on %.2f of unseen pages, want %.2f..%.2f", rate, tc.atLeast, tc.atMost)
			}
		})
	}
}

func TestNumbersOf(t *testing.T) {
	got := numbersOf("price lower than 40.00 dollars, 100 count. Total: $31.99.", nil)
	want := []float64{40, 100, 31.99}
	if len(got) != len(want) {
		t.Fatalf("got %v, want values %v", got, want)
	}
	than := wordHashes("than", nil)[0]
	for i, n := range got {
		if n.v != want[i] {
			t.Errorf("number %d: got %v, want %v", i, n.v, want[i])
		}
	}
	if got[0].before != than {
		t.Errorf("the word before 40.00: got hash %x, want that of \"than\"", got[0].before)
	}
}

// TestActionContextOffKeepsTheFeatures checks that the option leaves
// featurizers without it (every snapshot written before it) unchanged.
func TestActionContextOffKeepsTheFeatures(t *testing.T) {
	tr, actions, _ := resultsPage(rand.New(rand.NewPCG(1, 1)), "x", 0)
	plain, withCtx := DefaultFeaturizer(), must(NewHashProjection(HashProjectionConfig{ActionContext: true}))
	a, b, c := make([]float32, 256), make([]float32, 256), make([]float32, 256)
	plain.Features(tr.Instruction, tr.Steps[0].Observation, actions[1], a)
	must(NewHashProjection(HashProjectionConfig{})).Features(tr.Instruction, tr.Steps[0].Observation, actions[1], b)
	withCtx.Features(tr.Instruction, tr.Steps[0].Observation, actions[1], c)
	same, differs := true, false
	for i := range a {
		same = same && a[i] == b[i]
		differs = differs || a[i] != c[i]
	}
	if !same || !differs {
		t.Errorf("default config equal to the explicit zero config: %v (want true); ActionContext changes the features: %v (want true)", same, differs)
	}
	if spec := plain.Spec(); string(spec.Params) != `{"dim":256,"seed":0,"ngram":2,"nonzeros":16}` {
		t.Errorf("the default spec changed: %s", spec.Params)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestActionContextAllocatesNothing(t *testing.T) {
	tr, actions, _ := resultsPage(rand.New(rand.NewPCG(1, 1)), "x", 0)
	h := must(NewHashProjection(HashProjectionConfig{ActionContext: true}))
	dst := make([]float32, h.Dim())
	h.Features(tr.Instruction, tr.Steps[0].Observation, actions[1], dst) // warm the scratch
	if n := testing.AllocsPerRun(100, func() {
		h.Features(tr.Instruction, tr.Steps[0].Observation, actions[1], dst)
	}); n > 0 {
		t.Errorf("Features with ActionContext allocates %v times a call, want 0", n)
	}
}

// BenchmarkFeaturesActionContext compares the featurizer's cost with and
// without ActionContext on a results page (features/s).
func BenchmarkFeaturesActionContext(b *testing.B) {
	tr, actions, _ := resultsPage(rand.New(rand.NewPCG(1, 1)), "x", 0)
	for _, ctx := range []bool{false, true} {
		b.Run(fmt.Sprintf("context=%v", ctx), func(b *testing.B) {
			h := must(NewHashProjection(HashProjectionConfig{ActionContext: ctx}))
			dst := make([]float32, h.Dim())
			for b.Loop() {
				h.Features(tr.Instruction, tr.Steps[0].Observation, actions[1], dst)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "features/s")
		})
	}
}
