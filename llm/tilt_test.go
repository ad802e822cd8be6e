package llm

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rspo-dev/rspo/policy"
)

// knownPolicy is a fake server's π over the admissible actions of one
// state, and the scores a scorer gives them.
var (
	knownActs   = []string{"look", "open fridge 1", "go to countertop 1", "inventory"}
	knownPi     = []float64{0.4, 0.3, 0.2, 0.1}
	knownScores = map[string]float64{"look": 0, "open fridge 1": 1, "go to countertop 1": 2, "inventory": -1}
)

type tableScorer map[string]float64

func (s tableScorer) ScoreActions(_, _ string, actions []string, dst []float64) {
	for i, a := range actions {
		dst[i] = s[a]
	}
}

// sampleServer answers n completions drawn from knownPi with the
// request's seed, each with its log-prob.
func sampleServer(t *testing.T) string {
	srv := fakeServer(t, func(r ChatRequest) (int, any) {
		rng := rand.New(rand.NewPCG(uint64(*r.Seed), 1))
		resp := ChatResponse{}
		for i := range max(r.N, 1) {
			a := policy.SampleIndex(knownPi, rng)
			resp.Choices = append(resp.Choices, ChatChoice{Index: i, Message: ChatMessage{Role: "assistant", Content: knownActs[a]},
				Logprobs: &ChoiceLogprobs{Content: []TokenLogprob{{Token: TokenIDString(int32(a)), Logprob: math.Log(knownPi[a])}}}})
		}
		return 200, resp
	})
	return srv.URL
}

// TestTiltSIR: sampling-importance-resampling over n completions of π
// samples the exact tilt q ∝ π·exp(λ·score) to within the sampling error,
// and the recorded behaviour log-prob estimates log q(a) with a bias that
// shrinks as n grows (the estimator is consistent, its bias O(1/n)).
func TestTiltSIR(t *testing.T) {
	const lambda = 1.0
	q := make([]float64, len(knownPi))
	z := 0.0
	for i, p := range knownPi {
		q[i] = p * math.Exp(lambda*knownScores[knownActs[i]])
		z += q[i]
	}
	for i := range q {
		q[i] /= z
	}
	url := sampleServer(t)
	s := policy.State{Instruction: "i", Observation: "o", Admissible: knownActs}
	var biases []float64
	for _, tc := range []struct {
		n, trials int
		maxBias   float64
	}{{32, 4000, 0.1}, {256, 2000, 0.02}} {
		c := newTestChat(t, url, ChatConfig{Candidates: tc.n})
		counts := make([]float64, len(q))
		sumLP := make([]float64, len(q))
		for k := range tc.trials {
			ch, err := c.choose(context.Background(), "m", &s, sampling{seed: int64(k), tilt: tableScorer(knownScores), lambda: lambda})
			if err != nil {
				t.Fatal(err)
			}
			counts[ch.index]++
			sumLP[ch.index] += ch.logProb
		}
		worst := 0.0
		for i := range q {
			freq := counts[i] / float64(tc.trials)
			sd := math.Sqrt(q[i] * (1 - q[i]) / float64(tc.trials))
			if math.Abs(freq-q[i]) > 4*sd+0.5/float64(tc.n) {
				t.Errorf("n %d, %s: sampled %.4f of the time, exact tilt %.4f (sd %.4f)", tc.n, knownActs[i], freq, q[i], sd)
			}
			bias := math.Abs(sumLP[i]/counts[i] - math.Log(q[i]))
			if bias > tc.maxBias {
				t.Errorf("n %d, %s: mean recorded log-prob %.4f, log q %.4f", tc.n, knownActs[i], sumLP[i]/counts[i], math.Log(q[i]))
			}
			worst = max(worst, bias)
		}
		biases = append(biases, worst)
		t.Logf("n = %d: largest bias of the recorded log-prob %.4f", tc.n, worst)
	}
	if biases[1] >= biases[0] {
		t.Errorf("the log-prob bias did not shrink with n: %v", biases)
	}
	// Untilted, the same server samples π itself, and π's log-prob is recorded.
	c := newTestChat(t, url, ChatConfig{})
	counts := make([]float64, len(q))
	const trials = 4000
	for k := range trials {
		ch, err := c.choose(context.Background(), "m", &s, sampling{seed: int64(k)})
		if err != nil {
			t.Fatal(err)
		}
		counts[ch.index]++
		if ch.logProb != math.Log(knownPi[ch.index]) {
			t.Fatalf("untilted log-prob %v, want log π = %v", ch.logProb, math.Log(knownPi[ch.index]))
		}
	}
	for i, p := range knownPi {
		if freq := counts[i] / trials; math.Abs(freq-p) > 4*math.Sqrt(p*(1-p)/trials) {
			t.Errorf("untilted %s: %.4f, want %.4f", knownActs[i], freq, p)
		}
	}
}

// TestTiltRequest: a tilted step asks for Candidates completions in one
// request; a tilted greedy episode is refused.
func TestTiltRequest(t *testing.T) {
	var n int
	srv := fakeServer(t, func(r ChatRequest) (int, any) {
		n = r.N
		resp := ChatResponse{}
		for i := range max(r.N, 1) {
			resp.Choices = append(resp.Choices, textReply("look", -1).Choices[0])
			resp.Choices[i].Index = i
		}
		return 200, resp
	})
	env, task := household(t)
	ep := episode(task, 1)
	ep.Opts.Tilt, ep.Opts.TiltStrength = tableScorer(knownScores), 0.5
	p := newPlayer(t, srv.URL, EndpointConfig{}, ChatConfig{Candidates: 5})
	if _, err := p.Play(context.Background(), env, ep); err == nil || n != 5 {
		t.Errorf("got %v with n = %d; want the step cap after a request with n = 5", err, n)
	}
	ep.Opts.Greedy = true
	if _, err := p.Play(context.Background(), env, ep); err == nil {
		t.Error("a greedy tilted episode was played")
	}
}
