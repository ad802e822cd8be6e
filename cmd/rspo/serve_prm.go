package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

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
			return servePRM(cmd.Context(), &nf, f, cmd.ErrOrStderr())
		},
	}
	nf.register(cmd.Flags())
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
		"(rspo serve learner --prm-refresh, --prm-refresh-extra-run, --prm-refresh-window); this service reloads every version it publishes",
		[]string{"refresh", "extra-run", "refresh-window"}, "refresh")
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

// initialModel loads the starting model.
func (f servePRMFlags) initialModel(ctx context.Context, js jetstream.JetStream) (*prm.Model, error) {
	switch {
	case f.model != "":
		return prm.LoadFile(f.model)
	case f.object > 0:
		return prmsvc.Load(ctx, js, f.run, f.object)
	default:
		return prm.Random(f.random), nil
	}
}

func servePRM(ctx context.Context, nf *natsFlags, f servePRMFlags, stderr io.Writer) error {
	closeConn, js, err := connectJS(ctx, nf, "rspo-prm")
	if err != nil {
		return err
	}
	defer closeConn()
	m, err := f.initialModel(ctx, js)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	nc := js.Conn()
	svc, err := prmsvc.New(nc, js, prmsvc.Config{
		Run: f.run, Model: m, Reload: !f.noReload, Noise: f.noise, NoiseSeed: f.noiseSeed,
		QueueGroup: f.queueGroup, Logger: log,
	})
	if err != nil {
		return err
	}
	return svc.Run(ctx)
}
