package household

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rspo-dev/rspo/envs"
)

// Name is the registry name of the environment.
const Name = "household"

func init() {
	envs.Register(Name, Factory)
	envs.DeclareOptions(Name, envs.OptionSpec{Keys: optionKeys(), Lists: []string{OptTaskTypes}})
}

// ErrInvalidTask means Reset got a task this environment did not generate:
// an unknown type, or an instruction that does not match the seed.
var ErrInvalidTask = errors.New("household: invalid task")

// Env is the household environment with one difficulty configuration. It
// holds no mutable state and is safe for concurrent use.
type Env struct {
	cfg Config
}

var (
	_ envs.Env     = (*Env)(nil)
	_ envs.Planner = (*Env)(nil)
	_ envs.Bounded = (*Env)(nil)
)

// New returns an environment with configuration cfg, or the errors of
// cfg.Validate.
func New(cfg Config) (*Env, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Env{cfg: cfg}, nil
}

// Factory builds the environment from registry options (see
// ConfigFromOptions); nil options give the default alfworld preset.
func Factory(opts map[string]string) (envs.Env, error) {
	cfg, err := ConfigFromOptions(opts)
	if err != nil {
		return nil, err
	}
	return New(cfg)
}

// Config returns the environment's configuration.
func (env *Env) Config() Config { return env.cfg }

// BinaryOutcome implements envs.BinaryOutcome: the outcome is success.
func (env *Env) BinaryOutcome() bool { return true }

// MaxSteps implements envs.StepLimiter: an episode ends at the step limit.
func (env *Env) MaxSteps() int { return env.cfg.MaxSteps }

// Bounds implements envs.Bounded: the outcome is 1 for a success and 0
// otherwise, paid on the last step; the score is the outcome.
func (env *Env) Bounds() envs.Bounds {
	return envs.Bounds{Reward: envs.Range{Min: 0, Max: 1}, Score: envs.Range{Min: 0, Max: 1}, TwoValued: true, SuccessPaysMax: true}
}

// Name returns "household".
func (env *Env) Name() string { return Name }

// Splits lists train, eval_in_distribution and eval_out_of_distribution.
func (env *Env) Splits() []string {
	return []string{envs.SplitTrain, envs.SplitEvalIn, envs.SplitEvalOut}
}

// TrainTaskTypes lists the task types of this configuration's train mix
// (envs.TrainTaskTyper): the easy preset trains pick_and_place only, medium
// four of the six; the eval splits hold all six whatever the preset.
func (env *Env) TrainTaskTypes() []string {
	var out []string
	for t, w := range env.cfg.TaskMix {
		if w > 0 {
			out = append(out, typeNames[t])
		}
	}
	return out
}

// SourceOptions implements envs.Curriculum: the easy preset's small, open
// homes with this configuration's train task types, uniformly mixed, so a
// PRM trained on runs there has seen every type's steps succeed (the easy
// preset alone poses pick_and_place only).
func (env *Env) SourceOptions() map[string]string {
	return map[string]string{OptPreset: PresetEasy, OptTaskTypes: strings.Join(env.TrainTaskTypes(), ",")}
}

// SourceUpdates implements envs.Curriculum: 100. GRPO on the easy homes
// with all six types reaches 0.2 train success after 30 updates and
// 0.5–0.8 after 100; source runs of 30 updates on pick_and_place alone
// taught some target runs clean, heat and cool and others none.
func (env *Env) SourceUpdates() int { return 100 }

// SourceStages implements envs.StagedCurriculum: two when this
// configuration trains pick_two_and_place, one otherwise. The base
// algorithm on the easy homes succeeds at pick-two 0.16 of the time after
// 100 updates, the other types 0.7–0.9, so a PRM of those runs knows
// little of a pick-two task's second object; the tilted recipe on the same
// homes, steered by that PRM, succeeds at every type (0.89 overall), and a
// PRM of both stages' runs lifts pick-two in the target. Without pick-two
// (the medium preset) the first stage already succeeds at every type
// trained, and a second would only cost steps.
func (env *Env) SourceStages() int {
	if slices.Contains(env.TrainTaskTypes(), typeNames[pickTwoAndPlace]) {
		return 2
	}
	return 1
}

// TaskTypes lists the six ALFWorld task types.
func (env *Env) TaskTypes() []string { return TaskTypes() }

// Reset starts an episode of task. The home is derived from the task's
// seed, type and split, and from the environment's configuration (so one
// task is easier under the easy preset). It returns envs.ErrUnknownSplit or
// ErrInvalidTask for a task this environment could not have generated.
func (env *Env) Reset(task envs.Task) (envs.Episode, error) {
	spec, err := specOf(task)
	if err != nil {
		return nil, err
	}
	return newEpisode(buildWorld(spec, env.cfg, task.Seed), task, env.cfg.MaxSteps), nil
}

// specOf validates a task and derives its spec.
func specOf(task envs.Task) (taskSpec, error) {
	if !isSplit(task.Split) {
		return taskSpec{}, fmt.Errorf("%w %q in task %q", envs.ErrUnknownSplit, task.Split, task.ID)
	}
	t, ok := parseType(task.Type)
	if !ok {
		return taskSpec{}, fmt.Errorf("%w %q: unknown type %q", ErrInvalidTask, task.ID, task.Type)
	}
	spec := specFor(t, task.Seed, task.Split == envs.SplitEvalOut)
	if got := spec.instruction(); got != task.Instruction {
		return taskSpec{}, fmt.Errorf("%w %q: instruction %q does not match seed %d of type %s in split %s (want %q)",
			ErrInvalidTask, task.ID, task.Instruction, task.Seed, task.Type, task.Split, got)
	}
	return spec, nil
}
