package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/household" // registers "household"
	_ "github.com/rspo-dev/rspo/envs/shop"      // registers "shop"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/rollout"
)

func init() { addCommand(newEvalCmd) }

// defaultTrainEpisodes is the number of train tasks evaluated when
// --episodes is not given.
const defaultTrainEpisodes = 500

// evalPolicies builds the agents `rspo eval --policy` knows. Trained
// policies add themselves here.
var evalPolicies = map[string]func(env envs.Env) (envs.Agent, error){
	"random": func(envs.Env) (envs.Agent, error) { return envs.RandomAgent{}, nil },
	"expert": func(env envs.Env) (envs.Agent, error) { return envs.NewExpertAgent(env) },
	// untrained is the policy every run starts from.
	"untrained": func(envs.Env) (envs.Agent, error) {
		p, err := policy.New(policy.Config{})
		if err != nil {
			return nil, err
		}
		return policy.NewAgent(p, false), nil
	},
}

// evalFlags are the flags of `rspo eval`.
type evalFlags struct {
	env, split, policy string
	tiltPRM            string
	tilt               float64
	episodes           int
	seed               int64
	json, greedy       bool
	envOpts            map[string]string
}

func newEvalCmd() *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Evaluate a policy on an environment: success rate, mean score and steps per task type",
		Long: "Run a policy on the tasks of one split and print the success rate, mean score (the\n" +
			"graded score: the shop's under either reward option; the outcome reward elsewhere),\n" +
			"mean steps and share of inadmissible actions, overall and per task type.\n\n" +
			"Without --split it plays the environment's first held-out split (household:\n" +
			"eval_in_distribution, shop: eval): success on train tasks flatters a policy trained on them.\n" +
			"On train, --episodes tasks are generated from --seed (default " + fmt.Sprint(defaultTrainEpisodes) + "), one episode each.\n" +
			"On a fixed split every task runs once; fewer --episodes than tasks play a sample with the\n" +
			"split's task mix (as the in-run evaluation does), more cycle through all of its tasks.\n" +
			"--seed also seeds the policy's sampling, so a command line always prints the same figures.",
		Example: "  rspo eval --env household --split eval_in_distribution --policy expert\n" +
			"  rspo eval --env household --split train --policy random --episodes 5000 --env-opt preset=easy\n" +
			"  rspo eval --env shop --split eval --policy random --json | jq .overall\n" +
			"  rspo eval --policy untrained --tilt-prm easy-step.prm --tilt 10 --env-opt preset=medium --split train   # how far a PRM steers",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := runEval(cmd, f)
			if err != nil {
				return err
			}
			if f.json {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetEscapeHTML(false)
				return enc.Encode(res)
			}
			return writeEvalTable(cmd.OutOrStdout(), res)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.env, "env", "household", "environment: "+strings.Join(envs.Names(), "|"))
	fs.StringVar(&f.split, "split", "", "task split, e.g. train, eval_in_distribution, eval_out_of_distribution (household), eval (shop) (default: the environment's first held-out split)")
	fs.StringVar(&f.policy, "policy", "random", "policy: "+strings.Join(policyNames(), "|")+"|FILE (a trained policy snapshot, e.g. runs/<run>/report/policy.rspo)")
	fs.BoolVar(&f.greedy, "greedy", false, "with a trained policy: take the most probable action instead of sampling")
	fs.IntVar(&f.episodes, "episodes", 0, "number of episodes (0: every task of a fixed split, or "+fmt.Sprint(defaultTrainEpisodes)+" train tasks)")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the train tasks and of the policy's sampling")
	fs.BoolVar(&f.json, "json", false, "print one JSON object instead of a table")
	envOptsVar(fs, &f.envOpts, "environment option KEY=VALUE (repeatable, or comma-separated), e.g. preset=easy,max_steps=30"+envOptLists)
	fs.StringVar(&f.tiltPRM, "tilt-prm", "", "act with the policy tilted by this PRM snapshot, π·exp(λ·r̂), as a tilted explorer does (untrained or FILE policies)")
	fs.Float64Var(&f.tilt, "tilt", 10, "λ of --tilt-prm")
	return cmd
}

// evalResult is what `rspo eval` prints.
type evalResult struct {
	Split   string            `json:"split"`
	Policy  string            `json:"policy"`
	Seed    int64             `json:"seed"`
	Options map[string]string `json:"options,omitempty"`
	Tasks   int               `json:"tasks"`
	rollout.Report
}

// runEval checks the flags, builds the environment, tasks and agent, and
// evaluates.
func runEval(cmd *cobra.Command, f evalFlags) (evalResult, error) {
	newAgent, ok := evalPolicies[f.policy]
	if !ok {
		var err error
		if newAgent, err = snapshotAgent(f.policy, f.greedy); err != nil {
			return evalResult{}, err
		}
	}
	if f.episodes < 0 {
		return evalResult{}, fmt.Errorf("--episodes %d: give a positive number, or 0 for the default", f.episodes)
	}
	env, err := envs.New(f.env, f.envOpts)
	if err != nil {
		return evalResult{}, fmt.Errorf("--env %s: %w", f.env, err)
	}
	if !cmd.Flags().Changed("split") {
		if f.split, err = heldOutSplit(env); err != nil {
			return evalResult{}, err
		}
	}
	if !slices.Contains(env.Splits(), f.split) {
		return evalResult{}, fmt.Errorf("--split %q: %s has splits %s", f.split, env.Name(), strings.Join(env.Splits(), ", "))
	}
	tasks, episodes, err := evalTasks(env, f)
	if err != nil {
		return evalResult{}, err
	}
	agent, err := newAgent(env)
	if err != nil {
		return evalResult{}, fmt.Errorf("--policy %s: %w", f.policy, err)
	}
	if agent, err = tiltAgent(agent, f); err != nil {
		return evalResult{}, err
	}
	rep, err := rollout.Evaluate(cmd.Context(), env, tasks, agent, rollout.EvalOptions{Episodes: episodes, Seed: f.seed})
	if err != nil {
		return evalResult{}, err
	}
	res := evalResult{Split: f.split, Policy: f.policy, Seed: f.seed, Options: f.envOpts, Tasks: len(tasks), Report: rep}
	if f.tiltPRM != "" {
		res.Policy = fmt.Sprintf("%s tilted by %s (λ=%g)", f.policy, f.tiltPRM, f.tilt)
	}
	return res, nil
}

// heldOutSplit is the split `rspo eval` plays without --split: the
// environment's first split that is not train, the one a run's evaluation
// reports first.
func heldOutSplit(env envs.Env) (string, error) {
	for _, s := range env.Splits() {
		if s != envs.SplitTrain {
			return s, nil
		}
	}
	return "", fmt.Errorf("--split: %s has no held-out split; give --split %s", env.Name(), envs.SplitTrain)
}

// tiltAgent applies --tilt-prm to a policy agent.
func tiltAgent(agent envs.Agent, f evalFlags) (envs.Agent, error) {
	if f.tiltPRM == "" {
		return agent, nil
	}
	pa, ok := agent.(*policy.Agent)
	if !ok {
		return nil, fmt.Errorf("--tilt-prm steers a policy: use --policy untrained or a snapshot FILE, not %s", f.policy)
	}
	if !(f.tilt > 0) || math.IsInf(f.tilt, 0) {
		return nil, fmt.Errorf("--tilt %v: want a finite λ > 0", f.tilt)
	}
	m, err := prm.LoadFile(f.tiltPRM)
	if err != nil {
		return nil, fmt.Errorf("--tilt-prm: %w", err)
	}
	return pa.WithTilt(m, f.tilt), nil
}

// evalTasks returns the tasks to evaluate and the number of episodes.
func evalTasks(env envs.Env, f evalFlags) ([]envs.Task, int, error) {
	if f.split == envs.SplitTrain {
		n := f.episodes
		if n == 0 {
			n = defaultTrainEpisodes
		}
		tasks, err := env.Tasks(f.split, n, f.seed)
		return tasks, len(tasks), err
	}
	tasks, err := env.Tasks(f.split, 0, f.seed)
	if err == nil && len(tasks) == 0 {
		err = errors.New("the split has no tasks")
	}
	if err != nil {
		return nil, 0, fmt.Errorf("--split %s: %w", f.split, err)
	}
	if f.episodes > 0 && f.episodes < len(tasks) {
		// Fewer episodes than tasks: a sample with the split's task mix,
		// the one the learner's in-run evaluation plays, not the split's
		// first tasks (an arbitrary subset with a mix of its own).
		tasks = rollout.EvalSample(tasks, f.episodes, rollout.EpisodeSeed(f.seed, "eval-sample", f.split))
	}
	return tasks, f.episodes, nil
}

// snapshotAgent loads a trained policy snapshot from path.
func snapshotAgent(path string, greedy bool) (func(envs.Env) (envs.Agent, error), error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--policy %q: neither a known policy (%s) nor a snapshot file", path, strings.Join(policyNames(), ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("--policy: %w", err)
	}
	p, err := policy.Load(b)
	if err != nil {
		return nil, fmt.Errorf("--policy %s: %w", path, err)
	}
	return func(envs.Env) (envs.Agent, error) { return policy.NewAgent(p, greedy), nil }, nil
}

// policyNames lists the known policies.
func policyNames() []string { return slices.Sorted(maps.Keys(evalPolicies)) }

// writeEvalTable prints the result as a table, one row per task type.
func writeEvalTable(out io.Writer, r evalResult) error {
	fmt.Fprintf(out, "%s  split=%s  policy=%s  seed=%d  tasks=%d", r.Env, r.Split, r.Policy, r.Seed, r.Tasks)
	for _, k := range slices.Sorted(maps.Keys(r.Options)) {
		fmt.Fprintf(out, "  %s=%s", k, r.Options[k])
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "task type\tepisodes\tsuccess\tscore\tsteps\tinadmissible")
	row := func(name string, s rollout.Stats) {
		fmt.Fprintf(tw, "%s\t%d\t%.2f%%\t%.3f\t%.1f\t%.1f%%\n",
			name, s.Episodes, 100*s.SuccessRate, s.MeanScore, s.MeanSteps, 100*s.InadmissibleRate)
	}
	for _, t := range r.Types {
		row(t, r.ByType[t])
	}
	row("overall", r.Overall)
	return tw.Flush()
}
