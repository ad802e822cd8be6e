package policy

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// testState is a household-like state with a history.
func testState() *State {
	return &State{
		Instruction: "put a clean apple in fridge.",
		Observation: "You arrive at countertop 1. On the countertop 1, you see a apple 1, a bread 2, and a knife 1.",
		History: []Turn{
			{Observation: "You are in the middle of a room. Looking quickly around you, you see a countertop 1, a fridge 1, and a sinkbasin 1.", Action: "go to sinkbasin 1"},
			{Observation: "You arrive at sinkbasin 1. On the sinkbasin 1, you see nothing.", Action: "go to countertop 1"},
		},
		Admissible: []string{
			"go to fridge 1", "go to sinkbasin 1", "take apple 1 from countertop 1",
			"take bread 2 from countertop 1", "take knife 1 from countertop 1", "look", "inventory",
		},
	}
}

func newTestPolicy(t testing.TB, cfg Config) *Policy {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		field string // "" means valid
	}{
		{name: "defaults", cfg: Config{}},
		{name: "no history", cfg: Config{History: NoHistory}},
		{name: "too few buckets", cfg: Config{Buckets: 10}, field: "Buckets"},
		{name: "table too large", cfg: Config{Buckets: 1 << 22, EmbedDim: 64}, field: "Buckets"},
		{name: "embed too large", cfg: Config{EmbedDim: 1000}, field: "EmbedDim"},
		{name: "negative hidden", cfg: Config{Hidden: -3}, field: "Hidden"},
		{name: "history too long", cfg: Config{History: 65}, field: "History"},
		{name: "negative temperature", cfg: Config{Temperature: -1}, field: "Temperature"},
		{name: "NaN temperature", cfg: Config{Temperature: math.NaN()}, field: "Temperature"},
		{name: "init scale", cfg: Config{InitScale: 11}, field: "InitScale"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.field || !errors.Is(err, ErrConfig) {
				t.Fatalf("got %v, want a ConfigError on %s", err, tt.field)
			}
			if _, err := New(tt.cfg); !errors.Is(err, ErrConfig) {
				t.Fatalf("New: got %v, want ErrConfig", err)
			}
		})
	}
}

func TestConfigValidateReportsEveryField(t *testing.T) {
	err := Config{Buckets: 1, Hidden: -1, Temperature: -2}.Validate()
	for _, f := range []string{"Buckets", "Hidden", "Temperature"} {
		found := false
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			var ce *ConfigError
			found = found || errors.As(e, &ce) && ce.Field == f
		}
		if !found {
			t.Errorf("got %v, want a problem with %s", err, f)
		}
	}
}

func TestFreshPolicyIsUniform(t *testing.T) {
	p := newTestPolicy(t, Config{})
	s := testState()
	probs, logProbs, err := p.Distribution(s)
	if err != nil {
		t.Fatal(err)
	}
	want := 1 / float64(len(s.Admissible))
	for a := range probs {
		if math.Abs(probs[a]-want) > 1e-15 || math.Abs(logProbs[a]-math.Log(want)) > 1e-12 {
			t.Fatalf("action %d: got p=%v log p=%v, want %v", a, probs[a], logProbs[a], want)
		}
	}
	if v, _ := p.Value(s); v != 0 {
		t.Fatalf("value: got %v, want 0", v)
	}
}

func TestNoActions(t *testing.T) {
	p := newTestPolicy(t, Config{})
	s := testState()
	s.Admissible = nil
	if _, _, err := p.Distribution(s); !errors.Is(err, ErrNoActions) {
		t.Fatalf("got %v, want ErrNoActions", err)
	}
}

// randomize gives every parameter a random value so that no gradient path
// is zero (a fresh policy has zero output weights).
func randomize(p *Policy, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	for i := range p.params {
		p.params[i] = rng.NormFloat64() * 0.5
	}
}

func TestSampleDeterministic(t *testing.T) {
	p := newTestPolicy(t, Config{})
	randomize(p, 1)
	s := testState()
	draw := func() []int {
		rng := rand.New(rand.NewPCG(7, 7))
		var out []int
		for range 50 {
			i, lp, err := p.Sample(s, rng)
			if err != nil || lp > 0 {
				t.Fatalf("Sample: %d %v %v", i, lp, err)
			}
			out = append(out, i)
		}
		return out
	}
	a, b := draw(), draw()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("draw %d: got %d then %d, want equal", i, a[i], b[i])
		}
	}
}

func TestCloneIsIndependent(t *testing.T) {
	p := newTestPolicy(t, Config{Buckets: 1024})
	randomize(p, 2)
	c := p.Clone()
	s := testState()
	before, _, _ := c.Distribution(s)
	p.params[p.lay.w2] += 5
	after, _, _ := c.Distribution(s)
	for a := range before {
		if before[a] != after[a] {
			t.Fatalf("clone changed with its original: action %d %v → %v", a, before[a], after[a])
		}
	}
}

func TestTemperature(t *testing.T) {
	p := newTestPolicy(t, Config{})
	randomize(p, 3)
	s := testState()
	_, lp1, _ := p.Distribution(s)
	hot, err := p.WithTemperature(4)
	if err != nil {
		t.Fatal(err)
	}
	_, lp4, _ := hot.Distribution(s)
	if Entropy(lp4) <= Entropy(lp1) {
		t.Fatalf("entropy at T=4 %v not above T=1 %v", Entropy(lp4), Entropy(lp1))
	}
	if _, err := p.WithTemperature(0); !errors.Is(err, ErrConfig) {
		t.Fatalf("got %v, want ErrConfig", err)
	}
}
