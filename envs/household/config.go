package household

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Config sets the difficulty of the homes. Use a preset (Preset) and
// override fields as needed; Validate reports every problem at once.
type Config struct {
	// Preset names the preset the config started from (informational).
	Preset string
	// MinReceptacles and MaxReceptacles bound the number of receptacles in a
	// home (uniform in between). A home always holds at least the
	// receptacles its task needs, so tiny values are raised as required.
	MinReceptacles, MaxReceptacles int
	// Closed is the probability that an openable receptacle (cabinet,
	// drawer, fridge, microwave, safe) starts closed, hiding its contents.
	Closed float64
	// ObjectsPerReceptacle sets the number of objects (targets plus
	// distractors) relative to the number of receptacles.
	ObjectsPerReceptacle float64
	// TaskMix weights the task types of generated train tasks, indexed like
	// TaskTypes(). The fixed eval splits keep their own mix.
	TaskMix [numTypes]float64
	// MaxSteps is the step limit of an episode.
	MaxSteps int
}

// Preset names.
const (
	PresetEasy     = "easy"
	PresetMedium   = "medium"
	PresetALFWorld = "alfworld"
	PresetHard     = "hard"
	// DefaultPreset is ALFWorld-sized.
	DefaultPreset = PresetALFWorld
)

// alfworldMix is the task-type mix of ALFWorld's training set (3,553 tasks),
// in TaskTypes order.
var alfworldMix = [numTypes]float64{790, 813, 308, 650, 459, 533}

// presets holds the named configurations, easiest first.
var presets = map[string]Config{
	PresetEasy: {
		Preset: PresetEasy, MinReceptacles: 6, MaxReceptacles: 9, Closed: 0, ObjectsPerReceptacle: 1,
		TaskMix: [numTypes]float64{pickAndPlace: 1}, MaxSteps: 30,
	},
	PresetMedium: {
		Preset: PresetMedium, MinReceptacles: 12, MaxReceptacles: 18, Closed: 0.5, ObjectsPerReceptacle: 1,
		TaskMix:  [numTypes]float64{pickAndPlace: 1, lookAtObjInLight: 1, pickCleanThenPlace: 1, pickHeatThenPlace: 1},
		MaxSteps: 40,
	},
	PresetALFWorld: {
		Preset: PresetALFWorld, MinReceptacles: 20, MaxReceptacles: 30, Closed: 1, ObjectsPerReceptacle: 1,
		TaskMix: alfworldMix, MaxSteps: 50,
	},
	PresetHard: {
		Preset: PresetHard, MinReceptacles: 30, MaxReceptacles: 40, Closed: 1, ObjectsPerReceptacle: 1.5,
		TaskMix: [numTypes]float64{1, 1, 1, 1, 1, 1}, MaxSteps: 50,
	},
}

// Presets lists the preset names, easiest first.
func Presets() []string { return []string{PresetEasy, PresetMedium, PresetALFWorld, PresetHard} }

// Preset returns the named preset configuration.
func Preset(name string) (Config, error) {
	c, ok := presets[name]
	if !ok {
		return Config{}, fmt.Errorf("%w: unknown preset %q (known: %s)", ErrConfig, name, strings.Join(Presets(), ", "))
	}
	return c, nil
}

// DefaultConfig is the ALFWorld-sized preset.
func DefaultConfig() Config { return presets[DefaultPreset] }

// ErrConfig is the class of every configuration error.
var ErrConfig = errors.New("household: invalid config")

// Validate reports every problem of c, each wrapping ErrConfig.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if c.MinReceptacles < minReceptacles || c.MaxReceptacles < c.MinReceptacles || c.MaxReceptacles > maxReceptacles {
		bad("receptacles %d-%d: want %d ≤ min ≤ max ≤ %d", c.MinReceptacles, c.MaxReceptacles, minReceptacles, maxReceptacles)
	}
	if !(c.Closed >= 0 && c.Closed <= 1) {
		bad("closed %v: want a probability in [0, 1]", c.Closed)
	}
	if !(c.ObjectsPerReceptacle > 0 && c.ObjectsPerReceptacle <= 3) {
		bad("objects per receptacle %v: want (0, 3]", c.ObjectsPerReceptacle)
	}
	total := 0.0
	for i, w := range c.TaskMix {
		if !(w >= 0) {
			bad("task mix weight of %s is %v: want ≥ 0", typeNames[i], w)
		}
		total += w
	}
	if !(total > 0) {
		bad("task mix has no positive weight")
	}
	if c.MaxSteps < 1 || c.MaxSteps > 10_000 {
		bad("max_steps %d: want 1..10000", c.MaxSteps)
	}
	return errors.Join(errs...)
}

// Bounds of the receptacle count: every scene can hold maxReceptacles, and
// minReceptacles leaves room for a receptacle that is not the target.
const (
	minReceptacles = 4
	maxReceptacles = 40
)

// Option keys accepted by ConfigFromOptions.
const (
	OptPreset      = "preset"
	OptMaxSteps    = "max_steps"
	OptReceptacles = "receptacles"
	OptClosed      = "closed"
	OptObjects     = "objects"
	OptTaskTypes   = "task_types"
)

// optionSetters apply one option value to a config.
var optionSetters = map[string]func(*Config, string) error{
	OptMaxSteps:    setMaxSteps,
	OptReceptacles: setReceptacles,
	OptClosed:      setClosed,
	OptObjects:     setObjects,
	OptTaskTypes:   setTaskTypes,
}

// ConfigFromOptions builds a config from registry options: "preset" picks
// the base (default alfworld), and max_steps, receptacles ("N" or
// "MIN-MAX"), closed (probability), objects (per receptacle) and task_types
// ("a,b" or "a=3,b=1") override it. Unknown keys and bad values are errors
// wrapping ErrConfig.
func ConfigFromOptions(opts map[string]string) (Config, error) {
	name := DefaultPreset
	if v, ok := opts[OptPreset]; ok {
		name = v
	}
	c, err := Preset(name)
	if err != nil {
		return Config{}, err
	}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []error
	for _, k := range keys {
		if k == OptPreset {
			continue
		}
		set, ok := optionSetters[k]
		if !ok {
			errs = append(errs, fmt.Errorf("%w: unknown option %q (known: %s)", ErrConfig, k, strings.Join(optionKeys(), ", ")))
			continue
		}
		if err := set(&c, opts[k]); err != nil {
			errs = append(errs, fmt.Errorf("%w: option %s=%q: %v", ErrConfig, k, opts[k], err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	return c, c.Validate()
}

// optionKeys lists the accepted option keys.
func optionKeys() []string {
	keys := []string{OptPreset}
	for k := range optionSetters {
		keys = append(keys, k)
	}
	slices.Sort(keys[1:])
	return keys
}

func setMaxSteps(c *Config, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return errors.New("want an integer")
	}
	c.MaxSteps = n
	return nil
}

func setReceptacles(c *Config, v string) error {
	lo, hi, ranged := strings.Cut(v, "-")
	a, err := strconv.Atoi(lo)
	if err != nil {
		return errors.New(`want "N" or "MIN-MAX"`)
	}
	b := a
	if ranged {
		if b, err = strconv.Atoi(hi); err != nil {
			return errors.New(`want "N" or "MIN-MAX"`)
		}
	}
	c.MinReceptacles, c.MaxReceptacles = a, b
	return nil
}

func setClosed(c *Config, v string) error {
	p, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return errors.New("want a probability in [0, 1]")
	}
	c.Closed = p
	return nil
}

func setObjects(c *Config, v string) error {
	p, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return errors.New("want a number of objects per receptacle")
	}
	c.ObjectsPerReceptacle = p
	return nil
}

// setTaskTypes parses "a,b" (equal weights) or "a=3,b=1".
func setTaskTypes(c *Config, v string) error {
	var mix [numTypes]float64
	for _, part := range strings.Split(v, ",") {
		name, weight, weighted := strings.Cut(strings.TrimSpace(part), "=")
		t, ok := parseType(name)
		if !ok {
			return fmt.Errorf("unknown task type %q (known: %s)", name, strings.Join(typeNames[:], ", "))
		}
		w := 1.0
		if weighted {
			var err error
			if w, err = strconv.ParseFloat(weight, 64); err != nil || w < 0 {
				return fmt.Errorf("weight %q of %s: want a number ≥ 0", weight, name)
			}
		}
		mix[t] = w
	}
	c.TaskMix = mix
	return nil
}
