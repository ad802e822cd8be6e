package shop

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
)

// Preset names.
const (
	// PresetStandard is the default: families of 6 near-duplicates, 5
	// candidate queries, up to 3 attributes and 2 option values per
	// instruction, 15 steps.
	PresetStandard = "standard"
	// PresetEasy has families of 2, 3 candidate queries, 1 attribute and 1
	// option value per instruction and 20 steps.
	PresetEasy = "easy"
)

// Outcome rewards: what a purchase pays the learner.
const (
	// RewardScore is WebShop's graded reward (reward in reward.go): the
	// share of the goal's attributes, options and price limit the purchase
	// meets, times the type reward. The default.
	RewardScore = "score"
	// RewardSuccess pays 1 for a purchase that meets everything (score 1)
	// and 0 otherwise, as verl-agent, the GiGPO paper's framework, trains
	// WebShop (its environment redefines the reward: a win earns 10, any
	// other ending 0; the score is only reported). A purchase that misses
	// one option, about 0.75 under RewardScore, earns what buying nothing
	// does. Evaluations still report the graded score (Episode.Score).
	RewardSuccess = "success"
)

// Fixed layout of the site.
const (
	// EvalGoals is the number of eval goals: goals 0..EvalGoals-1.
	EvalGoals = 500
	// PageSize is the number of results on a results page.
	PageSize = 10
	// ResultsLimit is the number of results a search returns (WebShop's 50).
	ResultsLimit = 50
	// maxQueries is the number of kinds of candidate query (see queries.go).
	maxQueries = 5
)

// catalogueSeed fixes the generated catalogue and goals.
const catalogueSeed = 0x5_1409_2022

// Config configures the environment. The zero value is the standard preset.
type Config struct {
	// Preset is PresetStandard (default) or PresetEasy; the other zero
	// fields take its values.
	Preset string
	// MaxSteps ends an episode that has not bought anything. Default 15
	// (standard) or 20 (easy); at least the longest expert path (9).
	MaxSteps int
	// CatalogueSize is the number of products. Default 2000.
	CatalogueSize int
	// Goals is the number of indexed goals; goals 0..499 are eval, the rest
	// train. Default 6500.
	Goals int
	// NearDuplicates is the number of products per family: same brand,
	// title words and type, different attributes, options and price.
	// Default 6 (standard) or 2 (easy).
	NearDuplicates int
	// Queries is the number of candidate search queries per goal, 1..5.
	// Default 5 (standard) or 3 (easy).
	Queries int
	// GoalAttributes is the most attributes an instruction asks for, 1..3.
	// Default 3 (standard) or 1 (easy).
	GoalAttributes int
	// GoalOptions is the most option values an instruction asks for, 1..2
	// (one per option dimension of the product type). Default 2 (standard)
	// or 1 (easy).
	GoalOptions int
	// Reward is RewardScore (default) or RewardSuccess: the outcome reward
	// an episode pays (Episode.Outcome and the last step's reward).
	Reward string
}

// presets holds the defaults of each preset.
var presets = map[string]Config{
	PresetStandard: {MaxSteps: 15, CatalogueSize: 2000, Goals: 6500, NearDuplicates: 6, Queries: 5, GoalAttributes: 3, GoalOptions: 2},
	PresetEasy:     {MaxSteps: 20, CatalogueSize: 2000, Goals: 6500, NearDuplicates: 2, Queries: 3, GoalAttributes: 1, GoalOptions: 1},
}

// Option keys accepted by ParseOptions, each mapped to the field it sets.
var optionFields = map[string]func(*Config) *int{
	"max_steps":       func(c *Config) *int { return &c.MaxSteps },
	"catalogue_size":  func(c *Config) *int { return &c.CatalogueSize },
	"goals":           func(c *Config) *int { return &c.Goals },
	"near_duplicates": func(c *Config) *int { return &c.NearDuplicates },
	"queries":         func(c *Config) *int { return &c.Queries },
	"goal_attributes": func(c *Config) *int { return &c.GoalAttributes },
	"goal_options":    func(c *Config) *int { return &c.GoalOptions },
}

// OptionKeys lists the option keys the factory accepts, sorted.
func OptionKeys() []string {
	keys := []string{"preset", "reward"}
	for k := range optionFields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ParseOptions turns registry options into a validated Config with defaults
// filled. Unknown keys and malformed numbers are ConfigErrors.
func ParseOptions(opts map[string]string) (Config, error) {
	var cfg Config
	var errs []error
	for key, val := range opts {
		switch field, ok := optionFields[key]; {
		case (key == "preset" || key == "reward") && val == "":
			errs = append(errs, &ConfigError{Field: key, Reason: "an empty value: name one (an option left out takes the default)"})
		case key == "preset":
			cfg.Preset = val
		case key == "reward":
			cfg.Reward = val
		case !ok:
			errs = append(errs, &ConfigError{Field: key, Reason: fmt.Sprintf("unknown option (known: %v)", OptionKeys())})
		default:
			n, err := strconv.Atoi(val)
			if err != nil {
				errs = append(errs, &ConfigError{Field: key, Reason: fmt.Sprintf("%q is not an integer", val)})
				continue
			}
			*field(&cfg) = n
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	cfg = cfg.withDefaults()
	return cfg, cfg.Validate()
}

// withDefaults returns c with every zero field taken from its preset. An
// unknown preset is left for Validate to report.
func (c Config) withDefaults() Config {
	if c.Preset == "" {
		c.Preset = PresetStandard
	}
	if c.Reward == "" {
		c.Reward = RewardScore
	}
	p, ok := presets[c.Preset]
	if !ok {
		return c
	}
	fill := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	fill(&c.MaxSteps, p.MaxSteps)
	fill(&c.CatalogueSize, p.CatalogueSize)
	fill(&c.Goals, p.Goals)
	fill(&c.NearDuplicates, p.NearDuplicates)
	fill(&c.Queries, p.Queries)
	fill(&c.GoalAttributes, p.GoalAttributes)
	fill(&c.GoalOptions, p.GoalOptions)
	return c
}

// Validate reports every problem of a defaults-filled Config.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Field: field, Reason: fmt.Sprintf(format, args...)})
	}
	if _, ok := presets[c.Preset]; !ok {
		known := make([]string, 0, len(presets))
		for k := range presets {
			known = append(known, k)
		}
		slices.Sort(known)
		bad("preset", "unknown preset %q (known: %v)", c.Preset, known)
	}
	if c.Reward != RewardScore && c.Reward != RewardSuccess {
		bad("reward", "unknown reward %q (known: %s, %s)", c.Reward, RewardScore, RewardSuccess)
	}
	if c.MaxSteps < longestExpertPath || c.MaxSteps > 1000 {
		bad("max_steps", "got %d, want %d..1000 (the longest expert path is %d steps)", c.MaxSteps, longestExpertPath, longestExpertPath)
	}
	if c.NearDuplicates < 1 || c.NearDuplicates > 10 {
		bad("near_duplicates", "got %d, want 1..10", c.NearDuplicates)
	}
	if minSize := len(productTypes) * max(c.NearDuplicates, 1); c.CatalogueSize < minSize || c.CatalogueSize > 100_000 {
		bad("catalogue_size", "got %d, want %d..100000 (one family per product type)", c.CatalogueSize, minSize)
	}
	if c.Goals <= EvalGoals || c.Goals > 1_000_000 {
		bad("goals", "got %d, want %d..1000000 (goals 0..%d are eval, the rest train)", c.Goals, EvalGoals+1, EvalGoals-1)
	}
	if c.Queries < 1 || c.Queries > maxQueries {
		bad("queries", "got %d, want 1..%d", c.Queries, maxQueries)
	}
	if c.GoalAttributes < 1 || c.GoalAttributes > 3 {
		bad("goal_attributes", "got %d, want 1..3", c.GoalAttributes)
	}
	if c.GoalOptions < 1 || c.GoalOptions > 2 {
		bad("goal_options", "got %d, want 1..2", c.GoalOptions)
	}
	return errors.Join(errs...)
}

// longestExpertPath is the most steps the expert needs from the start:
// search, four next-page clicks, open the item, one click per option
// dimension (at most 2), buy.
const longestExpertPath = 1 + (ResultsLimit/PageSize - 1) + 1 + 2 + 1
