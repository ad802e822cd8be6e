// Package envs defines the multi-turn environment interface the agents act in
// and registers the built-in environments (household, shop). Environments are
// pure Go: they know nothing about NATS, policies or learning, and an episode
// is fully determined by its Task (in particular Task.Seed) and the actions.
package envs

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
)

// Split names a task split.
const (
	SplitTrain = "train"
	// SplitEvalIn is the household in-distribution eval split.
	SplitEvalIn = "eval_in_distribution"
	// SplitEvalOut is the household out-of-distribution eval split.
	SplitEvalOut = "eval_out_of_distribution"
	// SplitEval is the shop's eval split (goals 0–499).
	SplitEval = "eval"
)

// Task is one problem instance. The environment derives everything else
// (the world, the target product) from it deterministically.
type Task struct {
	// ID is unique within the environment, e.g. "household/train/1234".
	ID string
	// Type is the task family, e.g. "pick_heat_then_place" or "shop".
	Type string
	// Split is one of the Split constants.
	Split string
	// Seed determines the world.
	Seed int64
	// Instruction is the goal text shown to the agent.
	Instruction string
}

// StepResult is what an episode returns for one action.
type StepResult struct {
	// Observation is the text after the action.
	Observation string
	// Reward is the environment reward for this step: 0 until the episode
	// ends, then the outcome reward.
	Reward float64
	// Done is true when the episode has ended (goal reached, terminal action,
	// or step limit).
	Done bool
	// Admissible is false when the action was not in the admissible list; the
	// step is then wasted ("Nothing happens.") but still counts.
	Admissible bool
}

// Episode is one run of a task. It is not safe for concurrent use.
type Episode interface {
	// Task returns the task this episode solves.
	Task() Task
	// Observation returns the current observation text.
	Observation() string
	// Admissible returns the actions that are valid now. The slice must not
	// be modified by the caller; it may be reused by the next Step.
	Admissible() []string
	// Step applies one action and returns its result. Stepping a finished
	// episode returns ErrEpisodeDone.
	Step(action string) (StepResult, error)
	// Done reports whether the episode has ended.
	Done() bool
	// Outcome returns the outcome reward (valid once Done) in [0, 1].
	Outcome() float64
	// Success reports whether the task was completed (valid once Done).
	Success() bool
	// Steps returns the number of actions taken so far.
	Steps() int
	// StateKey identifies the current world state (including what the agent
	// holds and where it is); identical states give equal keys.
	StateKey() uint64
}

// Env creates tasks and episodes. Its methods are safe for concurrent use
// (many actors may share one Env); each Episode belongs to one goroutine.
// envtest.Run checks an implementation against this contract.
type Env interface {
	// Name is the registry name ("household", "shop").
	Name() string
	// Tasks returns n tasks of a split. For fixed splits (eval) n ≤ 0 means
	// all of them; for train, tasks are generated from seed.
	Tasks(split string, n int, seed int64) ([]Task, error)
	// Reset starts an episode of the task.
	Reset(task Task) (Episode, error)
	// Splits lists the split names this environment knows.
	Splits() []string
	// TaskTypes lists the task families in a stable order.
	TaskTypes() []string
}

// BinaryOutcome is implemented by environments whose outcome reward is 1
// for a success and 0 otherwise, so a score adds nothing to the success
// rate (the household); graded environments (the shop) do not implement it.
type BinaryOutcome interface {
	// BinaryOutcome reports whether Outcome is always Success as 0 or 1.
	BinaryOutcome() bool
}

// Scorer is implemented by episodes with a graded task score apart from
// the outcome reward they pay, e.g. the shop trained on success
// (reward=success) still scores each purchase as WebShop does.
// Evaluations report Score (see Score) beside the success rate.
type Scorer interface {
	// Score returns the episode's graded score in [0, 1] (valid once Done).
	Score() float64
}

// Score returns ep's graded score: Scorer's when ep implements it, its
// outcome reward otherwise.
func Score(ep Episode) float64 {
	if s, ok := ep.(Scorer); ok {
		return s.Score()
	}
	return ep.Outcome()
}

// StepLimiter is implemented by environments whose episodes end after a
// known number of steps: services bound the work a request may ask for by it.
type StepLimiter interface {
	// MaxSteps is the most steps an episode can take.
	MaxSteps() int
}

// Planner is implemented by environments that ship an expert: a policy that
// sees the hidden state and solves every task. It proves solvability and
// serves as the upper reference in evaluations.
type Planner interface {
	// ExpertAction returns the expert's next action for the episode.
	ExpertAction(ep Episode) (string, error)
}

// TrainTaskTyper is implemented by environments whose train split may pose
// only some of their task types (the household's easier presets), while
// their fixed eval splits hold every type.
type TrainTaskTyper interface {
	// TrainTaskTypes lists the task types train tasks are drawn from, in
	// TaskTypes order.
	TrainTaskTypes() []string
}

// Curriculum is implemented by environments with an easier setting whose
// recorded runs can teach a PRM what progress looks like in this one: the
// tilted recipe's built-in PRM source runs are played there. The easier
// setting must pose every task type this configuration trains on, or the
// PRM knows nothing of the steps only those types take.
type Curriculum interface {
	// SourceOptions returns the options (as for New) of the easier setting.
	SourceOptions() map[string]string
	// SourceUpdates is how many updates each source run trains: long
	// enough for the base algorithm to succeed at every task type of the
	// easier setting, so the PRM has seen each type's own steps pay, and
	// no longer, since the compute-fair view charges every source step to
	// the runs that use them.
	SourceUpdates() int
}

// StagedCurriculum is implemented by a Curriculum whose easier setting
// may take more than the base algorithm to learn every task type: when
// SourceStages says 2, the built-in source runs get a second stage, the
// tilted recipe itself in the easier setting, steered by a PRM of the
// first stage's runs, and the target's PRM learns from both stages.
type StagedCurriculum interface {
	Curriculum
	// SourceStages is the number of source stages, 1 or 2.
	SourceStages() int
}

// Errors returned by environments.
var (
	ErrEpisodeDone  = errors.New("envs: episode is done")
	ErrUnknownSplit = errors.New("envs: unknown split")
	ErrUnknownEnv   = errors.New("envs: unknown environment")
)

// Factory builds an environment from options ("preset" and other
// environment-specific keys); nil options give the default configuration.
type Factory func(opts map[string]string) (Env, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Factory{}
)

// Register makes an environment available by name. It panics on a duplicate
// name (a programming error caught at init).
func Register(name string, f Factory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("envs: duplicate registration of " + name)
	}
	registry[name] = f
}

// OptionSpec describes the options an environment's factory accepts, so
// that a command line can read several of them from one string
// (`--env-opt preset=easy,task_types=a=2,b=1`).
type OptionSpec struct {
	// Keys are every option key the factory accepts.
	Keys []string
	// Lists are the keys whose value is a comma-separated list whose items
	// may hold "=" (weights: "a=2,b=1"): in a command line's string, a
	// comma followed by anything but another declared key continues it.
	Lists []string
}

var optionSpecs = map[string]OptionSpec{}

// DeclareOptions records the options of the environment registered as
// name. Options no environment declares keep the plain reading: a comma
// followed by KEY= starts another pair.
func DeclareOptions(name string, spec OptionSpec) {
	registryMu.Lock()
	defer registryMu.Unlock()
	optionSpecs[name] = OptionSpec{Keys: slices.Clone(spec.Keys), Lists: slices.Clone(spec.Lists)}
}

// IsOptionKey reports whether some registered environment declares key.
func IsOptionKey(key string) bool {
	return anySpec(func(s OptionSpec) bool { return slices.Contains(s.Keys, key) })
}

// IsListOption reports whether some registered environment declares key a
// list whose items may hold "=".
func IsListOption(key string) bool {
	return anySpec(func(s OptionSpec) bool { return slices.Contains(s.Lists, key) })
}

func anySpec(f func(OptionSpec) bool) bool {
	registryMu.RLock()
	defer registryMu.RUnlock()
	for _, s := range optionSpecs {
		if f(s) {
			return true
		}
	}
	return false
}

// New builds the named environment.
func New(name string, opts map[string]string) (Env, error) {
	registryMu.RLock()
	f, ok := registry[name]
	registryMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %v)", ErrUnknownEnv, name, Names())
	}
	return f(opts)
}

// Names lists the registered environments in sorted order.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
