package experiments

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCommittedSuitesLoad(t *testing.T) {
	suites, err := LoadSuites("suites")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range suites {
		for _, quick := range []bool{false, true} {
			jobs, err := s.Jobs(quick)
			if err != nil {
				t.Errorf("suite %s quick=%v: %v", s.Name, quick, err)
			}
			if len(jobs) == 0 {
				t.Errorf("suite %s quick=%v: got no jobs", s.Name, quick)
			}
		}
	}
}

func TestSuiteLayering(t *testing.T) {
	s := &Suite{Name: "t", Seeds: []int64{1, 2},
		Base: []byte(`{"env_options": {"preset": "easy"}, "updates": 10}`),
		Variants: []Variant{
			{Name: "a", Config: []byte(`{"rspo": false, "env_options": {"max_steps": "20"}}`)},
			{Name: "b", Config: []byte(`{"k": 5}`), Seeds: []int64{7}},
		},
		Quick: &QuickOverride{Base: []byte(`{"updates": 2}`), Seeds: []int64{3}, Variants: []string{"b"}},
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		quick    bool
		wantRuns []string
		wantUpd  int
		wantK    int
		wantOpts int
	}{
		{name: "full", wantRuns: []string{"t-a-s1", "t-a-s2", "t-b-s7"}, wantUpd: 10, wantK: 3, wantOpts: 2},
		{name: "quick", quick: true, wantRuns: []string{"t-b-s3"}, wantUpd: 2, wantK: 5, wantOpts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jobs, err := s.Jobs(tt.quick)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, j := range jobs {
				got = append(got, j.RunName())
			}
			if len(got) != len(tt.wantRuns) {
				t.Fatalf("got runs %v, want %v", got, tt.wantRuns)
			}
			for i := range got {
				if got[i] != tt.wantRuns[i] {
					t.Errorf("run %d: got %s, want %s", i, got[i], tt.wantRuns[i])
				}
			}
			if c := jobs[0].Config; c.Updates != tt.wantUpd || (tt.quick && c.K != tt.wantK) || len(c.EnvOptions) != tt.wantOpts {
				t.Errorf("got updates %d k %d options %v, want %d, %d, %d options", c.Updates, c.K, c.EnvOptions, tt.wantUpd, tt.wantK, tt.wantOpts)
			}
		})
	}
}

func TestSuiteValidateRejects(t *testing.T) {
	tests := []struct {
		name string
		json string
	}{
		{name: "unknown key", json: `{"name": "x", "seeds": [1], "variants": [{"name": "a", "config": {"nope": 1}}]}`},
		{name: "no variants", json: `{"name": "x", "seeds": [1]}`},
		{name: "no seeds", json: `{"name": "x", "variants": [{"name": "a"}]}`},
		{name: "bad algo", json: `{"name": "x", "seeds": [1], "variants": [{"name": "a", "config": {"algo": "sarsa"}}]}`},
		{name: "prm source after user", json: `{"name": "x", "seeds": [1], "prm_sources": {"p": {"variants": ["b"]}},
			"variants": [{"name": "a", "prm_from": "p"}, {"name": "b"}]}`},
		{name: "bad prm target", json: `{"name": "x", "seeds": [1], "prm_sources": {"p": {"variants": ["a"], "target": "vibes"}},
			"variants": [{"name": "a"}, {"name": "b", "prm_from": "p"}]}`},
		{name: "bad run prm target", json: `{"name": "x", "seeds": [1], "variants": [{"name": "a", "config": {"prm_target": "vibes"}}]}`},
		{name: "unknown plotted variant", json: `{"name": "x", "seeds": [1], "variants": [{"name": "a"}], "plot_variants": ["b"]}`},
		{name: "unknown recipe", json: `{"name": "x", "seeds": [1], "variants": [{"name": "a", "config": {"recipe": "secret"}}]}`},
		{name: "bad run name", json: `{"name": "x y", "seeds": [1], "variants": [{"name": "a"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.json")
			if err := os.WriteFile(path, []byte(tt.json), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadSuite(path)
			if !errors.Is(err, ErrSuite) {
				t.Errorf("got %v, want an ErrSuite", err)
			}
		})
	}
}

// TestSuiteRecipe checks that a variant naming the tilted recipe gets
// `rspo run`'s default recipe: its values on every key no layer names, and
// the built-in PRM source runs; a suite without a recipe key stays on the
// paper's.
func TestSuiteRecipe(t *testing.T) {
	s := &Suite{Name: "t", Seeds: []int64{1},
		Base: []byte(`{"updates": 4}`),
		Variants: []Variant{
			{Name: "paper", Config: []byte(`{}`)},
			{Name: "tilted", Config: []byte(`{"recipe": "tilted"}`)},
			{Name: "tilted-hash", Config: []byte(`{"recipe": "tilted", "prm-features": "hash", "explore_tilt": 30}`)},
		},
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.Jobs(false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		variant    string
		recipe     string
		tilt       float64
		collect    int
		offRatio   string
		target     string
		features   string
		sourceRuns []string
	}{
		{variant: "paper", recipe: "paper", tilt: 0, collect: 1, offRatio: "behaviour", target: "sum", features: "hash"},
		{variant: "tilted", recipe: "tilted", tilt: 10, collect: 2, offRatio: "old", target: "step", features: "context",
			sourceRuns: []string{"prm-source-household-easy-508f267a-gigpo-u100-s101", "prm-source-household-easy-508f267a-gigpo-u100-s102", "prm-source-household-easy-508f267a-gigpo-tilted-u100-s103"}},
		{variant: "tilted-hash", recipe: "tilted", tilt: 30, collect: 2, offRatio: "old", target: "step", features: "hash",
			sourceRuns: []string{"prm-source-household-easy-508f267a-gigpo-u100-s101", "prm-source-household-easy-508f267a-gigpo-u100-s102", "prm-source-household-easy-508f267a-gigpo-tilted-u100-s103"}},
	}
	for i, tt := range tests {
		t.Run(tt.variant, func(t *testing.T) {
			c := jobs[i].Config
			if c.Recipe != tt.recipe || c.Explore.Tilt != tt.tilt || c.Explore.Collect != tt.collect || c.OffRatio != tt.offRatio ||
				c.PRMTarget != tt.target || c.PRMFeatures != tt.features || c.Updates != 4 {
				t.Errorf("got recipe %q tilt %v collect %d off-ratio %q prm-target %q prm-features %q updates %d, want %q %v %d %q %q %q 4",
					c.Recipe, c.Explore.Tilt, c.Explore.Collect, c.OffRatio, c.PRMTarget, c.PRMFeatures, c.Updates,
					tt.recipe, tt.tilt, tt.collect, tt.offRatio, tt.target, tt.features)
			}
			cfg, err := pipelineConfig(c, jobs[i].RunName(), jobs[i].Seed, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, sc := range cfg.SourceRuns {
				got = append(got, sc.Learner.Run)
			}
			if strings.Join(got, ",") != strings.Join(tt.sourceRuns, ",") {
				t.Errorf("built-in PRM source runs %v, want %v", got, tt.sourceRuns)
			}
		})
	}
}

// TestSourcesRevision: source runs a runner trains are stamped with its
// revision; reusing them from another revision (or an unstamped older
// directory) warns, naming both and the directory to delete.
func TestSourcesRevision(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "sources-abc")
	if err := os.MkdirAll(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if note, err := sourcesRevision(shared, true, "rev-new"); err != nil || !strings.Contains(note, "revision unrecorded") || !strings.Contains(note, shared) {
		t.Fatalf("unstamped directory: note %q, err %v; want a warning naming it", note, err)
	}
	if note, err := sourcesRevision(shared, false, "rev-old"); err != nil || note != "" {
		t.Fatalf("training: note %q, err %v; want none", note, err)
	}
	if note, _ := sourcesRevision(shared, true, "rev-old"); note != "" {
		t.Fatalf("reused by the revision that trained them: %q, want no warning", note)
	}
	note, err := sourcesRevision(shared, true, "rev-new")
	if err != nil || !strings.Contains(note, "rev-old") || !strings.Contains(note, "rev-new") {
		t.Fatalf("reused by another revision: note %q, err %v; want a warning naming both", note, err)
	}
	if note, _ := sourcesRevision(shared, true, ""); note != "" {
		t.Fatalf("a binary without a revision: %q, want no warning", note)
	}
}
