package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/prm/prmsvc"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// The demonstrations SFTOptions.Demos names.
const (
	// DemosExpert plays the environment's expert (envs.NewExpertAgent) on
	// fresh train tasks and keeps its successful episodes.
	DemosExpert = "expert"
	// DemosRunPrefix names a recorded run ("run:NAME") whose successful
	// on-policy episodes are the demonstrations.
	DemosRunPrefix = "run:"
)

// SFTOptions configure SFT: the cold start of an agent pipeline, a
// policy trained by maximum likelihood on demonstrations, written as a
// snapshot for --init-policy.
type SFTOptions struct {
	// Env and EnvOptions select the environment (its train tasks for
	// expert demonstrations).
	Env        string
	EnvOptions map[string]string
	// Demos is DemosExpert or "run:NAME".
	Demos string
	// Episodes is how many expert episodes to play (DemosExpert only).
	Episodes int
	// Seed draws the train tasks and orders training.
	Seed int64
	// Train configures the optimisation (learner.SFTConfig); its Seed is
	// Seed.
	Train learner.SFTConfig
	// Policy shapes the policy trained from scratch; see policy.Config.
	Policy policy.Config
	// Parallel is how many expert episodes are played at once. Default
	// GOMAXPROCS.
	Parallel int
}

// SFTResult is a policy trained by SFT and what it cost.
type SFTResult struct {
	Policy *policy.Policy `json:"-"`
	// Demos is the source as given, Trajectories the demonstrations kept
	// (successful ones) and EnvSteps the environment steps spent playing
	// every demonstration, kept or not: what the start costs in a
	// compute-fair comparison.
	Demos        string `json:"demos"`
	Env          string `json:"env"`
	Trajectories int    `json:"trajectories"`
	EnvSteps     int64  `json:"env_steps"`
	Seed         int64  `json:"seed"`
	// Report is the optimisation's (learner.SFTReport).
	Report learner.SFTReport `json:"report"`
}

// SFT collects the demonstrations opts names (js is needed for a recorded
// run's) and trains a fresh policy on them. ctx ends it early.
func SFT(ctx context.Context, js jetstream.JetStream, opts SFTOptions) (SFTResult, error) {
	env, err := envs.New(opts.Env, opts.EnvOptions)
	if err != nil {
		return SFTResult{}, err
	}
	res := SFTResult{Demos: opts.Demos, Env: opts.Env, Seed: opts.Seed}
	var demos []*schemas.Trajectory
	switch run, isRun := strings.CutPrefix(opts.Demos, DemosRunPrefix); {
	case opts.Demos == DemosExpert:
		demos, res.EnvSteps, err = ExpertDemos(ctx, env, opts.Episodes, opts.Seed, opts.Parallel)
	case isRun && js != nil:
		demos, res.EnvSteps, err = RunDemos(ctx, js, run)
	case isRun:
		err = fmt.Errorf("pipeline: demos %s: a recorded run's demonstrations need its store or server", opts.Demos)
	default:
		err = fmt.Errorf("pipeline: demos %q: want %s or %sNAME", opts.Demos, DemosExpert, DemosRunPrefix)
	}
	if err != nil {
		return res, err
	}
	res.Trajectories = len(demos)
	if res.Policy, err = policy.New(opts.Policy); err != nil {
		return res, err
	}
	cfg := opts.Train
	cfg.Seed = opts.Seed
	res.Report, err = learner.SFT(ctx, res.Policy, demos, cfg)
	return res, err
}

// ExpertDemos plays env's expert on n fresh train tasks (drawn with seed)
// and returns its successful episodes and the environment steps of all n.
func ExpertDemos(ctx context.Context, env envs.Env, n int, seed int64, parallel int) ([]*schemas.Trajectory, int64, error) {
	if n < 1 {
		return nil, 0, fmt.Errorf("pipeline: %d expert episodes: want at least 1", n)
	}
	expert, err := envs.NewExpertAgent(env)
	if err != nil {
		return nil, 0, err
	}
	tasks, err := env.Tasks(envs.SplitTrain, n, rollout.EpisodeSeed(seed, "sft-demos"))
	if err != nil {
		return nil, 0, err
	}
	eps := make([]rollout.Episode, len(tasks))
	for i, t := range tasks {
		eps[i] = rollout.Episode{Task: t, Opts: policy.RolloutOptions{Seed: rollout.EpisodeSeed(seed, "sft-demo", i),
			ID: fmt.Sprintf("sft-expert-s%d-%d", seed, i), Source: schemas.SourceOnPolicy}}
	}
	if parallel <= 0 {
		parallel = rollout.DefaultParallel()
	}
	trajs, err := rollout.All(ctx, env, rollout.AgentPlayer{Agent: expert}, eps, parallel)
	if err != nil {
		return nil, 0, err
	}
	return successful(trajs), rollout.EnvSteps(trajs), nil
}

// RunDemos returns the successful on-policy episodes of a recorded run
// (the PRM warm-up's left out) and the environment steps that run and
// the runs its PRM was trained on took.
func RunDemos(ctx context.Context, js jetstream.JetStream, run string) ([]*schemas.Trajectory, int64, error) {
	if err := streams.ValidateRun(run); err != nil {
		return nil, 0, err
	}
	if _, ok, err := learnersvc.LoadCheckpoint(ctx, js, run); err != nil || !ok {
		return nil, 0, errors.Join(fmt.Errorf("pipeline: demos run:%s: no such run on this server (rspo runs lists them)", run), err)
	}
	trajs, _, err := prmsvc.Collect(ctx, js, []prmsvc.Source{{Run: run, Subjects: []streams.SubjectKind{streams.KindTrajOnPolicy}}})
	if err != nil {
		return nil, 0, err
	}
	var own []*schemas.Trajectory
	for _, t := range trajs {
		if !t.PRMWarmup() {
			own = append(own, t)
		}
	}
	steps, err := sourceSteps(ctx, js, []string{run})
	return successful(own), steps, err
}

// successful keeps the trajectories that succeeded.
func successful(trajs []*schemas.Trajectory) []*schemas.Trajectory {
	var out []*schemas.Trajectory
	for _, t := range trajs {
		if t.Success {
			out = append(out, t)
		}
	}
	return out
}

// SFTRecordSuffix names the JSON record `rspo sft` writes beside a
// snapshot file (FILE + SFTRecordSuffix): what trained it and its cost,
// which a run warm-started from FILE counts in its source steps.
const SFTRecordSuffix = ".json"

// WriteSFT writes the result's policy to path and its record beside it.
func WriteSFT(path string, res SFTResult) error {
	b, err := res.Policy.MarshalBinary()
	if err != nil {
		return err
	}
	rec, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	if err := os.WriteFile(path+SFTRecordSuffix, append(rec, '\n'), 0o644); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	return nil
}
