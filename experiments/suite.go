package experiments

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/schemas"
)

// ErrSuite marks a suite file that cannot be used.
var ErrSuite = errors.New("experiments: invalid suite")

// Suite is one experiment: a base configuration, named variants laid over
// it, and the seeds each variant runs with.
type Suite struct {
	// Name identifies the suite; run names and directories derive from it.
	Name string `json:"name"`
	// Title and Question head the suite's section of the page.
	Title    string `json:"title"`
	Question string `json:"question"`
	// Base is laid over DefaultRunConfig; each variant's Config over Base.
	Base json.RawMessage `json:"base"`
	// Seeds every variant runs with unless it lists its own.
	Seeds []int64 `json:"seeds"`
	// Variants in run order: a variant that needs a PRM trained on other
	// variants' runs (PRMFrom) must come after them.
	Variants []Variant `json:"variants"`
	// PRMSources names PRMs trained on the recorded streams of variants of
	// this suite (all their seeds); a variant uses one with PRMFrom.
	PRMSources map[string]PRMSource `json:"prm_sources,omitempty"`
	// Quick overrides the suite for `--quick`: a smaller base, fewer
	// seeds, a subset of the variants.
	Quick *QuickOverride `json:"quick,omitempty"`
	// BudgetVariant names the variant whose final environment steps are
	// the compute-fair x of the outcome table. Default: the first variant
	// that is not a PRM source.
	BudgetVariant string `json:"budget_variant,omitempty"`
	// Compare lists pairs (baseline, treatment) of variant names whose
	// difference the page reports.
	Compare [][2]string `json:"compare,omitempty"`
	// PlotVariants, when set, are the variants the figures draw (a suite
	// with many variants makes an unreadable plot); the tables keep all.
	PlotVariants []string `json:"plot_variants,omitempty"`
}

// plotted reports whether the figures draw variant name.
func (s *Suite) plotted(name string) bool {
	return len(s.PlotVariants) == 0 || contains(s.PlotVariants, name)
}

// Variant is one configuration of a suite.
type Variant struct {
	Name  string `json:"name"`
	Label string `json:"label"`
	// Config is laid over the suite's base.
	Config json.RawMessage `json:"config"`
	// Seeds, if set, replaces the suite's seeds for this variant.
	Seeds []int64 `json:"seeds,omitempty"`
	// PRMFrom names an entry of the suite's PRMSources: the variant starts
	// from that PRM instead of a warm-up on its own policy.
	PRMFrom string `json:"prm_from,omitempty"`
	// Source marks a variant that only feeds a PRM source; the page lists
	// it apart from the comparison.
	Source bool `json:"source,omitempty"`
}

// PRMSource is a PRM trained on the recorded trajectories of variants.
type PRMSource struct {
	Variants []string `json:"variants"`
	// Note says in a few words what knowledge the PRM carries.
	Note string `json:"note,omitempty"`
	// MaxTrajectories bounds the training set: when the sources recorded
	// more, an evenly spaced subset of this size is used (early and late
	// trajectories alike). Default 0: all of them.
	MaxTrajectories int `json:"max_trajectories,omitempty"`
	// EvaluateOn lists variants whose recorded on-policy trajectories the
	// trained PRM is scored on (held-out AUC on the target setting), once
	// their runs have finished.
	EvaluateOn []string `json:"evaluate_on,omitempty"`
	// Target is the PRM's fit target: "sum" (default, eq. 7) or "step"
	// (every step fitted to the outcome: an action value for steering).
	Target prm.Target `json:"target,omitempty"`
}

// QuickOverride shrinks a suite to finish in minutes.
type QuickOverride struct {
	Base     json.RawMessage `json:"base,omitempty"`
	Seeds    []int64         `json:"seeds,omitempty"`
	Variants []string        `json:"variants,omitempty"`
}

// Job is one run of a suite: a variant with one seed and its full config.
type Job struct {
	Suite   string
	Variant Variant
	Seed    int64
	Config  RunConfig
}

// RunName is the job's run name, unique across suites.
func (j Job) RunName() string { return fmt.Sprintf("%s-%s-s%d", j.Suite, j.Variant.Name, j.Seed) }

// LoadSuite reads and validates a suite file.
func LoadSuite(path string) (*Suite, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSuite, err)
	}
	var s Suite
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSuite, path, err)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

// LoadSuites reads every *.json suite in dir, sorted by file name.
func LoadSuites(dir string) ([]*Suite, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSuite, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: no *.json suites in %s", ErrSuite, dir)
	}
	sort.Strings(paths)
	var out []*Suite
	for _, p := range paths {
		s, err := LoadSuite(p)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Validate reports every problem with the suite, including every job's
// configuration.
func (s *Suite) Validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrSuite}, a...)...))
	}
	if err := schemas.CheckRunName(s.Name); err != nil {
		bad("name: %v", err)
	}
	if len(s.Variants) == 0 {
		bad("suite %q has no variants", s.Name)
	}
	seen := map[string]int{}
	for i, v := range s.Variants {
		if _, dup := seen[v.Name]; dup {
			bad("variant %q appears twice", v.Name)
		}
		seen[v.Name] = i
		if err := schemas.CheckRunName(v.Name); err != nil {
			bad("variant name: %v", err)
		}
		if len(v.Seeds) == 0 && len(s.Seeds) == 0 {
			bad("variant %q has no seeds (set the suite's seeds or its own)", v.Name)
		}
		if v.PRMFrom != "" {
			src, ok := s.PRMSources[v.PRMFrom]
			if !ok {
				bad("variant %q: prm_from %q is not a prm_sources entry", v.Name, v.PRMFrom)
			}
			for _, name := range src.Variants {
				if j, ok := seen[name]; !ok || j >= i {
					bad("variant %q: prm source variant %q must be listed before it", v.Name, name)
				}
			}
		}
	}
	for name, src := range s.PRMSources {
		if src.Target != "" && src.Target != prm.TargetSum && src.Target != prm.TargetStep {
			bad("prm source %q: target %q: want %q or %q", name, src.Target, prm.TargetSum, prm.TargetStep)
		}
		for _, v := range append(append([]string(nil), src.Variants...), src.EvaluateOn...) {
			if _, ok := seen[v]; !ok {
				bad("prm source %q: unknown variant %q", name, v)
			}
		}
	}
	if _, ok := seen[s.BudgetVariant]; s.BudgetVariant != "" && !ok {
		bad("budget_variant: unknown variant %q", s.BudgetVariant)
	}
	for _, name := range s.PlotVariants {
		if _, ok := seen[name]; !ok {
			bad("plot_variants: unknown variant %q", name)
		}
	}
	for _, pair := range s.Compare {
		for _, name := range pair {
			if _, ok := seen[name]; !ok {
				bad("compare: unknown variant %q", name)
			}
		}
	}
	for _, quick := range []bool{false, true} {
		if _, err := s.Jobs(quick); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Jobs expands the suite into its runs in order: variants in file order,
// seeds ascending within a variant. With quick the Quick override applies.
func (s *Suite) Jobs(quick bool) ([]Job, error) {
	layers := []json.RawMessage{s.Base}
	seeds, keep := s.Seeds, map[string]bool(nil)
	if quick && s.Quick != nil {
		layers = append(layers, s.Quick.Base)
		if len(s.Quick.Seeds) > 0 {
			seeds = s.Quick.Seeds
		}
		if len(s.Quick.Variants) > 0 {
			keep = map[string]bool{}
			for _, n := range s.Quick.Variants {
				keep[n] = true
			}
		}
	}
	var jobs []Job
	var errs []error
	for _, v := range s.Variants {
		if keep != nil && !keep[v.Name] {
			continue
		}
		cfg, err := layered(append(layers[:len(layers):len(layers)], v.Config))
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: variant %q: %w", ErrSuite, v.Name, err))
			continue
		}
		vs := seeds
		if len(v.Seeds) > 0 && !(quick && s.Quick != nil && len(s.Quick.Seeds) > 0) {
			vs = v.Seeds
		}
		for _, seed := range vs {
			j := Job{Suite: s.Name, Variant: v, Seed: seed, Config: cfg}
			if _, err := pipelineConfig(cfg, j.RunName(), seed, "."); err != nil && v.PRMFrom == "" {
				errs = append(errs, fmt.Errorf("%w: run %s: %w", ErrSuite, j.RunName(), err))
			}
			jobs = append(jobs, j)
		}
	}
	return jobs, errors.Join(errs...)
}

// layered decodes each JSON object over DefaultRunConfig in turn; keys a
// layer leaves out keep the previous value (env_options maps merge). Then,
// as `rspo run --config` does, the recipe's values are set on every key no
// layer names: a layer with "recipe": "tilted" gets the default recipe of
// `rspo run` (and, unless it names a PRM, its built-in PRM source runs).
func layered(layers []json.RawMessage) (RunConfig, error) {
	cfg := DefaultRunConfig()
	given := map[string]bool{}
	for _, raw := range layers {
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		if cfg.EnvOptions != nil {
			cfg.EnvOptions = cloneMap(cfg.EnvOptions)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return RunConfig{}, fmt.Errorf("config %s: %w (keys are `rspo run` flag names with _ for -)", strings.TrimSpace(string(raw)), err)
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(raw, &keys); err != nil {
			return RunConfig{}, fmt.Errorf("config %s: %w", strings.TrimSpace(string(raw)), err)
		}
		for k := range keys {
			name, _ := pipeline.CanonicalKey(k)
			given[name] = true
		}
	}
	cfg, err := cfg.WithRecipe(func(key string) bool { return given[key] })
	if err != nil {
		return RunConfig{}, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// VariantByName returns the named variant.
func (s *Suite) VariantByName(name string) (Variant, bool) {
	for _, v := range s.Variants {
		if v.Name == name {
			return v, true
		}
	}
	return Variant{}, false
}

// streamsNeeded reports whether a variant's recorded streams feed a PRM
// source or its evaluation, so its runs' stores must be kept.
func (s *Suite) streamsNeeded(variant string) bool {
	for _, src := range s.PRMSources {
		if contains(src.Variants, variant) || contains(src.EvaluateOn, variant) {
			return true
		}
	}
	return false
}
