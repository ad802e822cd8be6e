package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/producers"
)

func init() {
	addServeCommand(newServeActorCmd)
	addServeCommand(newServeExplorerCmd)
	addServeCommand(newServeLearnerCmd)
}

// serveStage runs the stage called name of the stage table against the
// server of nf, with cfg's settings.
func serveStage(cmd *cobra.Command, nf natsFlags, name string, cfg pipeline.Config) error {
	cfg.NATSURL, cfg.Connect = nf.url, nf.options(fmt.Sprintf("rspo-%s-%s", name, cfg.Learner.Run))
	if err := nf.applyReplicas(&cfg); err != nil {
		return err
	}
	cfg.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
	stop, err := startMetrics(cmd, &cfg)
	if err != nil {
		return err
	}
	defer stop()
	return pipeline.Serve(cmd.Context(), cfg, name)
}

// refusedFlag is a flag a stage does not take: setting it fails, saying why
// and where the setting belongs, instead of being silently ignored.
type refusedFlag struct{ name, why string }

func (f refusedFlag) String() string { return "" }
func (f refusedFlag) Type() string   { return "refused" }
func (f refusedFlag) Set(string) error {
	return fmt.Errorf("this stage does not take --%s: %s", f.name, f.why)
}

// refuseFlags registers hidden flags that fail when given. Boolean-looking
// ones (bools lists them) may be given without a value.
func refuseFlags(fs *pflag.FlagSet, why string, names []string, bools ...string) {
	for _, n := range names {
		f := fs.VarPF(refusedFlag{name: n, why: why}, n, "", "")
		f.Hidden = true
		for _, b := range bools {
			if b == n {
				f.NoOptDefVal = "true"
			}
		}
	}
}

func newServeActorCmd() *cobra.Command {
	var nf natsFlags
	var cfg pipeline.Config
	ps := defaultPolicySettings()
	cmd := &cobra.Command{
		Use:   "actor",
		Short: "Roll out π_θ for the learner's rollout requests (start as many as you like)",
		Long: "Pull rollout requests from rspo.<run>.work.rollout, load the requested policy version from\n" +
			"the object store, play the episodes and publish each trajectory to rspo.<run>.traj.onpolicy.\n" +
			"Actors of a run share one work queue: add actors to add throughput. They also play the\n" +
			"learner's evaluation shards (rspo.<run>.work.eval, when the learner has --eval-shards ≥ 2) and\n" +
			"answer each on rspo.<run>.eval.<update>; a killed actor's shard goes to another after --ack-wait.\n" +
			"With --policy openai the episodes, evaluations included, are played through an\n" +
			"OpenAI-compatible chat server (vLLM, SGLang, rspo serve policy).",
		Example: "  rspo serve actor --nats nats://127.0.0.1:4222 --run exp1\n" +
			"  rspo serve actor --run exp1 --policy openai --endpoint http://gpu1:8000/v1 --model Qwen2.5-7B-Instruct --parallel 32",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Actor.AckWait <= 0 {
				return fmt.Errorf("--ack-wait %v: give a positive duration", cfg.Actor.AckWait)
			}
			var err error
			if cfg.Policy, err = ps.Config(); err != nil {
				return err
			}
			return serveStage(cmd, nf, pipeline.StageActor, cfg)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Learner.Run, "run", "", "run name (required)")
	fs.StringVar(&cfg.Actor.Name, "name", "", "actor name in trajectories (default actor-<host>-<pid>)")
	fs.IntVar(&cfg.Actor.Parallel, "parallel", 0, "episodes played at once (default GOMAXPROCS)")
	fs.DurationVar(&cfg.Actor.AckWait, "ack-wait", 30*time.Second, "a killed actor's request goes to another actor after this long (heartbeats every third of it)")
	fs.Int64Var(&cfg.Actor.StepBudget, "step-budget", producers.DefaultStepBudget,
		"most environment steps one request may ask for (tasks × group × step limit); larger requests are dead-lettered")
	registerSettings(fs, &ps, stageActor)
	nf.register(fs)
	nf.registerReplicas(fs)
	registerMetricsFlag(fs)
	cmd.SetUsageFunc(groupedUsage)
	_ = cmd.MarkFlagRequired("run")
	return cmd
}

// explorerSettingFlags are the explorer settings that used to be flags of
// `serve explorer`: the learner decides them now, and every cycle's plan
// carries them to whichever explorer explores it.
var explorerSettingFlags = []string{"explorer", "prm-noise", "gate-auc", "tilt", "lr", "epochs"}

func newServeExplorerCmd() *cobra.Command {
	var nf natsFlags
	var cfg pipeline.Config
	ps := defaultPolicySettings()
	cmd := &cobra.Command{
		Use:   "explorer",
		Short: "Run RSPO's stage 1 for the cycles the learner starts, one shard at a time (start as many as it has shards)",
		Long: "Pull explore shards from rspo.<run>.work.explore (the learner queues --explore-shards of them\n" +
			"per cycle; explorers of a run share them as a work queue). For each: read the cycle's plan from\n" +
			"its cycle.started event, copy π_θ of the announced version and explore as the plan says — train\n" +
			"the copy for k updates on the PRM's dense rewards (the paper's explorer; every shard trains the\n" +
			"same π_B on all the cycle's tasks, only the collection is split), or act with π_θ·exp(λ·PRM score)\n" +
			"(--explore-tilt on the learner), or the frozen and random-prm controls — publish the rollouts of\n" +
			"the shard's tasks to rspo.<run>.traj.explore for the swapper, then announce the shard's\n" +
			"cycle.explored. A killed explorer's shard goes to another after --ack-wait, redone with the same\n" +
			"seeds and trajectory ids. Every explorer setting is the learner's: this stage needs only --run.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Explorer.AckWait <= 0 {
				return fmt.Errorf("--ack-wait %v: give a positive duration", cfg.Explorer.AckWait)
			}
			if cfg.Explorer.StepBudget <= 0 || cfg.Explorer.ShardBudget <= 0 {
				return fmt.Errorf("--step-budget %d, --shard-budget %d: give positive numbers of steps", cfg.Explorer.StepBudget, cfg.Explorer.ShardBudget)
			}
			var err error
			if cfg.Policy, err = ps.Config(); err != nil {
				return err
			}
			return serveStage(cmd, nf, pipeline.StageExplorer, cfg)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Learner.Run, "run", "", "run name (required)")
	fs.StringVar(&cfg.Explorer.Name, "name", "", "explorer name in trajectories (default explorer-<host>-<pid>)")
	fs.IntVar(&cfg.Explorer.Parallel, "parallel", 0, "episodes played at once (default GOMAXPROCS)")
	fs.DurationVar(&cfg.Explorer.AckWait, "ack-wait", 30*time.Second, "a killed explorer's shard goes to another explorer after this long (heartbeats every third of it)")
	fs.Int64Var(&cfg.Explorer.StepBudget, "step-budget", producers.DefaultExploreStepBudget,
		"most environment steps' worth of rollouts held at once for a shard (a training update's or the collection, each episode at the step limit); shards over it are dead-lettered")
	fs.Int64Var(&cfg.Explorer.ShardBudget, "shard-budget", producers.DefaultShardStepBudget,
		"most environment steps one shard may take in all; shards over it are dead-lettered")
	refuseFlags(fs, "explorer settings are the learner's (rspo serve learner --explorer, --explore-tilt, "+
		"--prm-noise, --gate-auc, --lr, --epochs) and reach the explorer in every cycle's plan", explorerSettingFlags)
	registerSettings(fs, &ps, stageExplorer) // tilted and frozen cycles may play through a chat server
	cmd.SetUsageFunc(groupedUsage)
	nf.register(fs)
	nf.registerReplicas(fs)
	registerMetricsFlag(fs)
	_ = cmd.MarkFlagRequired("run")
	return cmd
}

func newServeLearnerCmd() *cobra.Command {
	var nf natsFlags
	var configFile string
	var printConfig bool
	var exploreTimeout, rolloutTimeout time.Duration
	o := defaultRunOptions()
	cmd := &cobra.Command{
		Use:   "learner",
		Short: "Run the RSPO loop against a server where actors, explorers, swapper and buffer serve",
		Long: "Own π_θ: ask actors for rollouts through the work queue, start each cycle with its plan\n" +
			"(which carries every explorer setting to the explorers), sample the buffer, update, publish\n" +
			"every policy version, metrics and control events. A restarted learner resumes from its\n" +
			"checkpoint. With --eval-shards N ≥ 2 each evaluation is played by the actors in N work items\n" +
			"(same figures as in-process). Takes the training flags of `rspo run`.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var file *pipeline.OptionsFile
			if configFile != "" {
				var err error
				if file, err = loadRunConfig(cmd.Flags(), configFile, &o); err != nil {
					return err
				}
				if err := refuseUnusedKeys(configFile, file.Keys, stageLearner); err != nil {
					return err
				}
			}
			if err := applyRecipe(cmd.Flags(), file, &o); err != nil {
				return err
			}
			if printConfig {
				return printRunConfig(cmd.OutOrStdout(), o, file, unusedKeys(stageLearner)...)
			}
			pc, err := o.Config()
			if err != nil {
				return file.Place(err)
			}
			for _, f := range []struct {
				name string
				d    time.Duration
			}{{"explore-timeout", exploreTimeout}, {"rollout-timeout", rolloutTimeout}} {
				if f.d <= 0 {
					return fmt.Errorf("--%s %v: give a positive duration", f.name, f.d)
				}
			}
			pc.Learner.ExploreTimeout, pc.Learner.RolloutTimeout = exploreTimeout, rolloutTimeout
			pr := newProgress(cmd.ErrOrStderr())
			pc.Progress, pc.Phase = pr.update, pr.phase
			err = serveStage(cmd, nf, pipeline.StageLearner, pc)
			pr.close()
			if err != nil {
				if cmd.Context().Err() != nil {
					return interrupted{run: pc.Learner.Run}
				}
				return err
			}
			return printLearnerResult(cmd, nf, pc.Learner.Run)
		},
	}
	fs := cmd.Flags()
	registerSettings(fs, &o, stageLearner)
	fs.StringVar(&configFile, "config", "", configUsage)
	fs.BoolVar(&printConfig, "print-config", false, "print the effective settings (every default filled in) as YAML and exit")
	fs.DurationVar(&exploreTimeout, "explore-timeout", 10*time.Minute,
		"how long to wait for a cycle's explorers and for the buffer to hold their records before training on what it holds (the cycle is then reported short of its exploration)")
	fs.DurationVar(&rolloutTimeout, "rollout-timeout", 10*time.Minute, "how long to wait for an update's on-policy rollouts from the actors before the update fails")
	nf.register(fs)
	nf.registerReplicas(fs)
	registerMetricsFlag(fs)
	cmd.SetUsageFunc(groupedUsage)
	return cmd
}

// printLearnerResult prints the finished run's checkpoint.
func printLearnerResult(cmd *cobra.Command, nf natsFlags, run string) error {
	nc, js, err := nf.connect(cmd.Context(), "rspo-learner-result-"+run)
	if err != nil {
		return err
	}
	defer nc.Close()
	cp, _, err := learnersvc.LoadCheckpoint(cmd.Context(), js, run)
	if err != nil {
		return err
	}
	if _, err = fmt.Fprintf(cmd.OutOrStdout(), "run %s: %d updates, policy version %d, %d environment steps\n",
		run, cp.Update, cp.Version, cp.EnvStepsActor+cp.EnvStepsExplorer); err != nil {
		return err
	}
	_, err = fmt.Fprint(cmd.OutOrStdout(), shortCyclesWarning(cp.ShortCycles,
		"no explorer answered, or the buffer did not hold their records, within --explore-timeout"))
	return err
}
