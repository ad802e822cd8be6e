package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/household" // registers "household"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/prm/trajfile"
	"github.com/rspo-dev/rspo/schemas"
)

// maxCollect bounds one collect run (trajectories are held in memory).
const maxCollect = 1 << 16

// prmCollectFlags are the flags of `rspo prm collect`.
type prmCollectFlags struct {
	env, preset, split, policyFile, out, run string
	envOpts                                  map[string]string
	tasks, perTask, maxSteps                 int
	seed                                     int64
	temperature                              float64
	keepAdmissible                           bool
}

func newPRMCollectCmd() *cobra.Command {
	var f prmCollectFlags
	cmd := &cobra.Command{
		Use:   "collect",
		Short: "Roll out a policy (default: the untrained, uniform one) and write the trajectories to a file",
		Long: "Play --tasks tasks of an environment split --per-task times each with a policy snapshot, or with a\n" +
			"fresh policy (exactly uniform over the admissible actions), and write the trajectories (package\n" +
			"prm/trajfile: Arrow IPC batches) for `rspo prm train --file`, without the admissible-action lists\n" +
			"unless --keep-admissible.",
		Example: "  rspo prm collect --env household --env-opt preset=easy --tasks 1024 --per-task 4 --out easy.arrow",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			return collectTrajectories(cmd.Context(), f, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.env, "env", "household", "environment: "+strings.Join(envs.Names(), ", "))
	fs.StringVar(&f.preset, "preset", "", "environment preset (household: easy, medium, alfworld, hard)")
	_ = fs.MarkDeprecated("preset", "use --env-opt preset=NAME as every other command does")
	envOptsVar(fs, &f.envOpts, "environment option KEY=VALUE (repeatable, or comma-separated), e.g. max_steps=40"+envOptLists)
	fs.StringVar(&f.split, "split", envs.SplitTrain, "task split")
	fs.IntVar(&f.tasks, "tasks", 256, "number of tasks")
	fs.IntVar(&f.perTask, "per-task", 4, "episodes per task (one GRPO group)")
	fs.StringVar(&f.policyFile, "policy", "", "policy snapshot to act with (default: a fresh, uniform policy)")
	fs.Float64Var(&f.temperature, "temperature", 0, "softmax temperature override (0 keeps the policy's)")
	fs.IntVar(&f.maxSteps, "max-steps", 0, "cap on steps per episode (0: the policy's default)")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the tasks and of the action sampling")
	fs.StringVar(&f.run, "as-run", "collect", "run name recorded in the trajectories")
	fs.StringVar(&f.out, "out", "", "trajectory file to write (required)")
	fs.BoolVar(&f.keepAdmissible, "keep-admissible", false, "keep each step's admissible-action list (the PRM does not read it; it makes files ~20× larger)")
	return cmd
}

func (f prmCollectFlags) validate() error {
	var errs []error
	if f.out == "" {
		errs = append(errs, errors.New("--out FILE is required"))
	}
	if f.tasks < 1 || f.perTask < 1 {
		errs = append(errs, fmt.Errorf("--tasks %d and --per-task %d must be at least 1", f.tasks, f.perTask))
	} else if n := f.tasks * f.perTask; n > maxCollect {
		errs = append(errs, fmt.Errorf("--tasks × --per-task = %d exceeds %d trajectories per file; write several files with different --seed", n, maxCollect))
	}
	if err := schemas.CheckRunName(f.run); err != nil {
		errs = append(errs, fmt.Errorf("--as-run: %w", err))
	}
	return errors.Join(errs...)
}

// envOptions turns --env-opt (and the deprecated --preset) into registry
// options.
func (f prmCollectFlags) envOptions() (map[string]string, error) {
	opts := map[string]string{}
	if f.preset != "" {
		opts["preset"] = f.preset
	}
	for k, v := range f.envOpts {
		if k == "preset" && f.preset != "" && v != f.preset {
			return nil, fmt.Errorf("--preset %s and --env-opt preset=%s disagree; give --env-opt alone", f.preset, v)
		}
		opts[k] = v
	}
	return opts, nil
}

func (f prmCollectFlags) loadPolicy() (*policy.Policy, error) {
	if f.policyFile == "" {
		return policy.New(policy.Config{})
	}
	b, err := os.ReadFile(f.policyFile)
	if err != nil {
		return nil, fmt.Errorf("--policy: %w", err)
	}
	p, err := policy.Load(b)
	if err != nil {
		return nil, fmt.Errorf("--policy %s: %w", f.policyFile, err)
	}
	return p, nil
}

// collectTrajectories plays the episodes and writes the file.
func collectTrajectories(ctx context.Context, f prmCollectFlags, out io.Writer) error {
	opts, err := f.envOptions()
	if err != nil {
		return err
	}
	env, err := envs.New(f.env, opts)
	if err != nil {
		return err
	}
	tasks, err := env.Tasks(f.split, f.tasks, f.seed)
	if err != nil {
		return err
	}
	p, err := f.loadPolicy()
	if err != nil {
		return err
	}
	trajs := make([]*schemas.Trajectory, 0, len(tasks)*f.perTask)
	successes := 0
	for i, task := range tasks {
		for k := range f.perTask {
			seq := uint64(i*f.perTask + k)
			t, err := policy.Rollout(ctx, env, task, p, policy.RolloutOptions{
				Seed: f.seed<<20 ^ int64(seq), Temperature: f.temperature, MaxSteps: f.maxSteps,
				Run: f.run, Producer: "prm-collect", GroupID: fmt.Sprintf("%s/g%d", f.run, i), Seq: seq,
				ID: schemas.TrajectoryID(f.run, schemas.SourceOnPolicy, fmt.Sprintf("prm-collect-s%d", f.seed), seq),
			})
			if err != nil {
				return err
			}
			if t.Success {
				successes++
			}
			if !f.keepAdmissible {
				dropAdmissible(t)
			}
			trajs = append(trajs, t)
		}
	}
	if err := trajfile.Write(f.out, trajs); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%d trajectories of %s (%s), %d successes (%.2f%%), written to %s\n",
		len(trajs), f.env, f.split, successes, 100*float64(successes)/float64(len(trajs)), f.out)
	return err
}

// dropAdmissible removes the admissible-action lists, keeping their counts
// and the chosen indices, which stay valid without the lists.
func dropAdmissible(t *schemas.Trajectory) {
	for i := range t.Steps {
		s := &t.Steps[i]
		s.NumAdmissible = max(s.NumAdmissible, int32(len(s.Admissible)))
		s.Admissible = nil
	}
}
