package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
)

func init() { addCommand(newSFTCmd) }

// sftFlags are the flags of `rspo sft`.
type sftFlags struct {
	env, demos, out string
	envOpts         map[string]string
	episodes        int
	evalEpisodes    int
	seed            int64
	train           learner.SFTConfig
	src             sourceFlags
}

func newSFTCmd() *cobra.Command {
	f := sftFlags{env: "household", demos: pipeline.DemosExpert, episodes: 1024, evalEpisodes: 128, seed: 1,
		train: learner.SFTConfig{LR: 0.01, MaxEpochs: 50, Patience: 5, HeldOut: 0.1, Batch: 16}}
	cmd := &cobra.Command{
		Use:   "sft",
		Short: "Train a policy by maximum likelihood on demonstrations, as a start for rspo run --init-policy",
		Long: "Supervised fine-tuning: the cold start of an agent pipeline. Collect demonstrations — the\n" +
			"environment's expert on fresh train tasks (--demos expert --episodes K), or the successful\n" +
			"episodes of a recorded run (--demos run:NAME, read from --data or --nats) — hold out a share\n" +
			"of their tasks, train a fresh policy on the rest until the held-out loss stops improving, and\n" +
			"write the best epoch's policy to --out, with a record of what it cost beside it (OUT.json).\n" +
			"Then `rspo run --init-policy OUT` trains from it; the run counts the demonstrations'\n" +
			"environment steps with its own.",
		Example: "  rspo sft --demos expert --episodes 1024 --out sft.policy\n" +
			"  rspo run --init-policy sft.policy --updates 150\n" +
			"  rspo sft --demos run:household-grpo-base-s1 --data runs --out own.policy",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.out == "" {
				return errors.New("--out FILE: where to write the policy")
			}
			if f.evalEpisodes < 0 {
				return fmt.Errorf("--eval-episodes %d: want 0 (no evaluation) or more", f.evalEpisodes)
			}
			return runSFT(cmd, f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.env, "env", f.env, "environment: household|shop")
	envOptsVar(fs, &f.envOpts, "environment option KEY=VALUE (repeatable, or comma-separated)"+envOptLists)
	fs.StringVar(&f.demos, "demos", f.demos, "demonstrations: expert (the environment's expert on fresh train tasks) or run:NAME (a recorded run's successful episodes)")
	countVar(fs, &f.episodes, "episodes", "expert episodes to play (--demos expert; the failed ones are not kept)")
	fs.StringVar(&f.out, "out", "", "policy snapshot file to write (required); its record goes to OUT.json")
	fs.Int64Var(&f.seed, "seed", f.seed, "seed of the train tasks, the held-out split and the order of training")
	fs.Float64Var(&f.train.LR, "lr", f.train.LR, "learning rate (Adam)")
	countVar(fs, &f.train.MaxEpochs, "max-epochs", "most passes over the training demonstrations")
	countVar(fs, &f.train.Patience, "patience", "stop after this many epochs without a lower held-out loss (the best epoch is kept)")
	fs.Float64Var(&f.train.HeldOut, "held-out", f.train.HeldOut, "share of the demonstrations' tasks held out for early stopping")
	countVar(fs, &f.train.Batch, "batch", "demonstrations per optimiser step")
	fs.IntVar(&f.evalEpisodes, "eval-episodes", f.evalEpisodes, "episodes of each eval split to evaluate the trained policy on (0: none)")
	f.src.register(fs)
	return cmd
}

// runSFT collects the demonstrations, trains, writes the policy and its
// record, and evaluates it on the environment's eval splits.
func runSFT(cmd *cobra.Command, f sftFlags) error {
	ctx, w := cmd.Context(), cmd.ErrOrStderr()
	opts := pipeline.SFTOptions{Env: f.env, EnvOptions: f.envOpts, Demos: f.demos, Episodes: f.episodes, Seed: f.seed, Train: f.train}
	opts.Train.OnEpoch = func(e learner.SFTEpoch) { fmt.Fprintln(w, sftEpochLine(e)) }
	var js jetstream.JetStream
	if strings.HasPrefix(f.demos, pipeline.DemosRunPrefix) {
		var closeFn func()
		var err error
		if js, closeFn, err = f.src.open(ctx, "rspo-sft"); err != nil {
			return err
		}
		defer closeFn()
	}
	fmt.Fprintf(w, "rspo: SFT on %s demonstrations (%s)\n", f.demos, f.env)
	res, err := pipeline.SFT(ctx, js, opts)
	if err != nil {
		return err
	}
	if err := pipeline.WriteSFT(f.out, res); err != nil {
		return err
	}
	r := res.Report
	fmt.Fprintf(cmd.OutOrStdout(), "sft: %d demonstrations (%d environment steps to collect), %d trained on (%d steps), %d held out (%d steps)\n",
		res.Trajectories, res.EnvSteps, r.TrainDemos, r.TrainSteps, r.HeldOutDemos, r.HeldOutSteps)
	fmt.Fprintf(cmd.OutOrStdout(), "  kept epoch %d of %d: held-out loss %.3f (untrained %.3f), held-out action accuracy %.3f\n",
		r.BestEpoch, r.Epochs, r.HeldOutLoss, r.StartLoss, r.HeldOutAccuracy)
	if f.evalEpisodes > 0 {
		if err := printSFTEval(cmd, f, res); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "policy: %s (start a run from it: rspo run --init-policy %s)\n", f.out, f.out)
	return err
}

// sftEpochLine is the progress line of one SFT epoch.
func sftEpochLine(e learner.SFTEpoch) string {
	line := fmt.Sprintf("  SFT epoch %d: train loss %.4f, held-out loss %.4f (action accuracy %.3f), best at epoch %d",
		e.Epoch, e.TrainLoss, e.HeldOutLoss, e.HeldOutAccuracy, e.BestEpoch)
	if e.Last {
		return line + fmt.Sprintf("; done, keeping epoch %d", e.BestEpoch)
	}
	return line + fmt.Sprintf(" (stops after %d epochs without a better one)", e.Patience)
}

// printSFTEval evaluates the trained policy on every eval split (sampled
// actions, as runs evaluate) and prints each success rate.
func printSFTEval(cmd *cobra.Command, f sftFlags, res pipeline.SFTResult) error {
	env, err := envs.New(f.env, f.envOpts)
	if err != nil {
		return err
	}
	for _, split := range env.Splits() {
		if split == envs.SplitTrain {
			continue
		}
		tasks, err := env.Tasks(split, 0, f.seed)
		if err != nil {
			return err
		}
		rep, err := rollout.Evaluate(cmd.Context(), env, rollout.EvalSample(tasks, f.evalEpisodes, f.seed), policyAgent(res),
			rollout.EvalOptions{Episodes: f.evalEpisodes, Seed: 1})
		if err != nil {
			return err
		}
		printEvalLine(cmd.OutOrStdout(), split, rep)
	}
	return nil
}

// printEvalLine prints one split's success rate (and score, where the
// environment grades).
func printEvalLine(w io.Writer, split string, rep rollout.Report) {
	fmt.Fprintf(w, "  %-26s success %.3f  score %.3f  (%d episodes)\n", split, rep.Overall.SuccessRate, rep.Overall.MeanScore, rep.Overall.Episodes)
}

// policyAgent plays the SFT result's policy with sampled actions.
func policyAgent(res pipeline.SFTResult) envs.Agent { return policy.NewAgent(res.Policy, false) }
