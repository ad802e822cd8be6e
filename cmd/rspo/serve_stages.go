package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/producers"
	"github.com/rspo-dev/rspo/streams"
)

func init() {
	addServeCommand(newServeActorCmd)
	addServeCommand(newServeExplorerCmd)
	addServeCommand(newServeLearnerCmd)
}

// connectService dials the server, ensures the topology and returns a
// logger for the service.
func connectService(ctx context.Context, cmd *cobra.Command, nf natsFlags, name string) (*nats.Conn, jetstream.JetStream, *slog.Logger, error) {
	nc, js, err := nf.connect(ctx, name)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := streams.Ensure(ctx, js, streams.Options{}); err != nil {
		nc.Close()
		return nil, nil, nil, err
	}
	return nc, js, slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)), nil
}

func newServeActorCmd() *cobra.Command {
	var nf natsFlags
	var cfg producers.ActorConfig
	cmd := &cobra.Command{
		Use:   "actor",
		Short: "Roll out π_θ for the learner's rollout requests (start as many as you like)",
		Long: "Pull rollout requests from rspo.<run>.work.rollout, load the requested policy version from\n" +
			"the object store, play the episodes and publish each trajectory to rspo.<run>.traj.onpolicy.\n" +
			"Actors of a run share one work queue: add actors to add throughput.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			nc, js, log, err := connectService(cmd.Context(), cmd, nf, "rspo-actor-"+cfg.Run)
			if err != nil {
				return err
			}
			defer nc.Close()
			cfg.Logger = log
			a, err := producers.NewActor(js, cfg)
			if err != nil {
				return err
			}
			log.Info("actor serving", "run", cfg.Run, "subject", streams.Subjects(cfg.Run).WorkRollout)
			return a.Run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Run, "run", "", "run name (required)")
	fs.StringVar(&cfg.Name, "name", "", "actor name in trajectories (default actor-<host>-<pid>)")
	fs.IntVar(&cfg.Parallel, "parallel", 0, "episodes played at once (default GOMAXPROCS)")
	nf.register(fs)
	_ = cmd.MarkFlagRequired("run")
	return cmd
}

func newServeExplorerCmd() *cobra.Command {
	var nf natsFlags
	var mode string
	var lr float64
	var epochs int
	cfg := producers.ExplorerConfig{}
	cmd := &cobra.Command{
		Use:   "explorer",
		Short: "Run RSPO's stage 1 for every cycle: train π_B on dense PRM rewards and publish its rollouts",
		Long: "On every cycle.started event: copy π_θ of the announced version, train the copy for k\n" +
			"updates on the PRM's dense rewards, publish its rollouts to rspo.<run>.traj.explore for the\n" +
			"swapper, then announce cycle.explored. --explorer frozen and random-prm are the controls.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Mode = producers.ExplorerMode(mode)
			cfg.Trainer = learner.Config{LR: lr, Epochs: epochs}
			if err := cfg.Validate(); err != nil {
				return err
			}
			nc, js, log, err := connectService(cmd.Context(), cmd, nf, "rspo-explorer-"+cfg.Run)
			if err != nil {
				return err
			}
			defer nc.Close()
			cfg.Logger = log
			x, err := producers.NewExplorer(js, cfg)
			if err != nil {
				return err
			}
			log.Info("explorer serving", "run", cfg.Run, "mode", cfg.Mode)
			return x.Run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Run, "run", "", "run name (required)")
	fs.StringVar(&cfg.Name, "name", "", "explorer name in trajectories (default explorer-<host>-<pid>)")
	fs.StringVar(&mode, "explorer", string(producers.ModePRM), "mode: prm|frozen|random-prm")
	fs.Float64Var(&cfg.PRMNoise, "prm-noise", 0, "σ of Gaussian noise on PRM scores (ablation)")
	fs.Float64Var(&cfg.GateAUC, "gate-auc", 0, "shape only with a PRM whose held-out AUC reaches this (0: off)")
	fs.Float64Var(&cfg.Tilt, "tilt", 0, "λ > 0: act with π_θ·exp(λ·PRM score) instead of training π_B (0: the paper's trained explorer)")
	fs.Float64Var(&lr, "lr", 0, "learning rate of π_B's updates (default: the learner's)")
	fs.IntVar(&epochs, "epochs", 0, "epochs per explorer update (default: the learner's)")
	fs.IntVar(&cfg.Parallel, "parallel", 0, "episodes played at once (default GOMAXPROCS)")
	nf.register(fs)
	_ = cmd.MarkFlagRequired("run")
	return cmd
}

func newServeLearnerCmd() *cobra.Command {
	var nf natsFlags
	var configFile string
	o := defaultRunOptions()
	cmd := &cobra.Command{
		Use:   "learner",
		Short: "Run the RSPO loop against a server where actors, explorers, swapper and buffer serve",
		Long: "Own π_θ: ask actors for rollouts through the work queue, start each cycle, sample the\n" +
			"buffer, update, publish every policy version, metrics and control events. A restarted\n" +
			"learner resumes from its checkpoint. Takes the training flags of `rspo run`.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if configFile != "" {
				if err := loadRunConfig(cmd.Flags(), configFile, &o); err != nil {
					return err
				}
			}
			pc, err := o.Config()
			if err != nil {
				return err
			}
			lc := pc.Learner
			lc.Explorer = pc.ExplorerMode
			nc, js, log, err := connectService(cmd.Context(), cmd, nf, "rspo-learner-"+lc.Run)
			if err != nil {
				return err
			}
			defer nc.Close()
			lc.Logger = log
			if err := streams.Ensure(cmd.Context(), js, streams.Options{}); err != nil {
				return err
			}
			if err := pipeline.CheckSettings(cmd.Context(), js, lc.Run, pc.Settings); err != nil {
				return err
			}
			svc, err := learnersvc.New(nc, js, lc)
			if err != nil {
				return err
			}
			svc.OnProgress(progressReporter(cmd.ErrOrStderr(), int64(lc.Updates)))
			if err := svc.Run(cmd.Context()); err != nil {
				return err
			}
			cp := svc.Checkpoint()
			fmt.Fprintf(cmd.OutOrStdout(), "run %s: %d updates, policy version %d, %d environment steps\n",
				lc.Run, cp.Update, cp.Version, cp.EnvStepsActor+cp.EnvStepsExplorer)
			return nil
		},
	}
	fs := cmd.Flags()
	registerRunFlags(fs, &o)
	fs.StringVar(&configFile, "config", "", "JSON file with run settings (as for `rspo run`); flags override it")
	nf.register(fs)
	return cmd
}
