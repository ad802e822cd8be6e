package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmsvc"
	"github.com/rspo-dev/rspo/streams"
)

func init() { addServeCommand(newServePRMCmd) }

// servePRMFlags are the flags of `rspo serve prm`.
type servePRMFlags struct {
	run, model, queueGroup string
	object                 int64
	random                 uint64
	useRandom, noReload    bool
	noise                  float64
	noiseSeed              uint64
}

func newServePRMCmd() *cobra.Command {
	var (
		nf natsFlags
		f  servePRMFlags
	)
	cmd := &cobra.Command{
		Use:   "prm",
		Short: "Serve the PRM's per-step scores on rspo.<run>.prm.score",
		Long: "Answer scoring requests (an Arrow IPC trajectory batch; the reply is JSON {prm_version, scores, totals},\n" +
			"errors are micro error replies) with a PRM loaded from a file, from the object store, or random (the\n" +
			"control). Follows rspo.<run>.ctrl.prm.published and reloads every newer version unless --no-reload,\n" +
			"so it serves each version the learner's refresh (serve learner --prm-refresh) publishes.",
		Example: "  rspo serve prm --nats nats://127.0.0.1:4222 --run exp1 --model prm.bin\n" +
			"  rspo serve prm --run exp1 --random 7 --no-reload          # the untrained-PRM control\n" +
			"  rspo serve prm --run hard1 --object 3                     # a version the learner published",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.useRandom = cmd.Flags().Changed("random")
			if err := f.validate(); err != nil {
				return err
			}
			cfg, err := f.config()
			if err != nil {
				return err
			}
			return serveStage(cmd, nf, pipeline.StagePRM, cfg)
		},
	}
	nf.register(cmd.Flags())
	nf.registerReplicas(cmd.Flags())
	registerMetricsFlag(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVar(&f.run, "run", "", "run to serve (required)")
	fs.StringVar(&f.model, "model", "", "PRM snapshot file to serve")
	fs.Int64Var(&f.object, "object", 0, "serve this PRM version from the run's object store")
	fs.Uint64Var(&f.random, "random", 0, "serve an untrained PRM with this seed (the control mode)")
	fs.BoolVar(&f.noReload, "no-reload", false, "keep the starting model; ignore prm.published")
	fs.Float64Var(&f.noise, "noise", 0, "σ of Gaussian noise added to every step score (robustness ablation)")
	fs.Uint64Var(&f.noiseSeed, "noise-seed", 1, "seed of the score noise")
	fs.StringVar(&f.queueGroup, "queue-group", "", "queue group shared by instances (default micro's)")
	refuseFlags(fs, "the learner refreshes the PRM and names each version in its cycle plans "+
		"(rspo serve learner --prm-refresh, --prm-refresh-extra-run, --prm-refresh-window, --prm-refresh-epochs); this service reloads every version it publishes",
		[]string{"refresh", "extra-run", "refresh-window", "refresh-epochs"}, "refresh")
	_ = cmd.MarkFlagRequired("run")
	return cmd
}

// validate checks the flags and says what to fix.
func (f servePRMFlags) validate() error {
	var errs []error
	if err := streams.ValidateRun(f.run); err != nil {
		errs = append(errs, fmt.Errorf("--run: %w", err))
	}
	sources := 0
	for _, given := range []bool{f.model != "", f.object > 0, f.useRandom} {
		if given {
			sources++
		}
	}
	if sources != 1 {
		errs = append(errs, errors.New("give exactly one of --model FILE, --object VERSION or --random SEED"))
	}
	if f.object < 0 {
		errs = append(errs, fmt.Errorf("--object %d: versions are positive", f.object))
	}
	if f.noise < 0 {
		errs = append(errs, fmt.Errorf("--noise %v: give σ ≥ 0", f.noise))
	}
	return errors.Join(errs...)
}

// config maps the flags to the PRM stage's configuration.
func (f servePRMFlags) config() (pipeline.Config, error) {
	pc := pipeline.PRMConfig{Object: f.object, Service: prmsvc.Config{Reload: !f.noReload, Noise: f.noise,
		NoiseSeed: f.noiseSeed, QueueGroup: f.queueGroup}}
	switch {
	case f.model != "":
		m, err := prm.LoadFile(f.model)
		if err != nil {
			return pipeline.Config{}, fmt.Errorf("--model: %w", err)
		}
		pc.Model = m
	case f.object <= 0:
		pc.Model = prm.Random(f.random)
	}
	return pipeline.Config{Learner: learnersvc.Config{Run: f.run}, PRM: pc}, nil
}
