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
	refresh                bool
	refreshWindow          int
	extraRuns              []string
	train                  prmTrainFlags
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
			"control). Follows rspo.<run>.ctrl.prm.published and reloads every newer version unless --no-reload.\n" +
			"With --refresh it also retrains the PRM from the run's own streams at every cycle.ended and publishes\n" +
			"each version (optionally mixing in other runs' recorded data with --extra-run).",
		Example: "  rspo serve prm --nats nats://127.0.0.1:4222 --run exp1 --model prm.bin\n" +
			"  rspo serve prm --run exp1 --random 7 --no-reload          # the untrained-PRM control\n" +
			"  rspo serve prm --run hard1 --model easy.prm --refresh --extra-run easy1",
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
	fs.BoolVar(&f.refresh, "refresh", false, "retrain and publish the PRM from the run's streams at every cycle.ended")
	fs.IntVar(&f.refreshWindow, "refresh-window", 0, "most recent own trajectories a refresh trains on (default 8192)")
	fs.StringArrayVar(&f.extraRuns, "extra-run", nil, "other recorded run mixed into every refresh (repeatable)")
	f.train.register(fs)
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
	if !f.refresh && (len(f.extraRuns) > 0 || f.refreshWindow != 0) {
		errs = append(errs, errors.New("--extra-run and --refresh-window are only used with --refresh"))
	}
	if f.train.warm != "" || f.train.version != 0 {
		errs = append(errs, errors.New("--warm and --version do not apply to serve prm: refreshes warm-start from the served model (--model, --object) and count its version up"))
	}
	if f.refresh && f.noReload {
		errs = append(errs, errors.New("--refresh publishes new versions that --no-reload would ignore; drop one"))
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
	if !f.refresh {
		return svc.Run(ctx)
	}
	r, err := f.refresher(js, m)
	if err != nil {
		return err
	}
	if err := svc.Start(ctx); err != nil {
		return err
	}
	rerr := r.Run(ctx, log)
	return errors.Join(rerr, svc.Stop())
}

// refresher builds the per-cycle refresher, warm-starting from the served
// model unless it is the random control.
func (f servePRMFlags) refresher(js jetstream.JetStream, m *prm.Model) (*prmsvc.Refresher, error) {
	cfg, err := f.train.config()
	if err != nil {
		return nil, err
	}
	extra := make([]prmsvc.Source, len(f.extraRuns))
	for i, run := range f.extraRuns {
		if err := streams.ValidateRun(run); err != nil {
			return nil, fmt.Errorf("--extra-run: %w", err)
		}
		extra[i] = prmsvc.Source{Run: run}
	}
	initial := m
	if !m.Info.Trained {
		initial = nil
	}
	return prmsvc.NewRefresher(js, prmsvc.RefreshConfig{
		Run: f.run, Initial: initial, Extra: extra, Window: f.refreshWindow, Train: cfg, Publish: true,
	})
}
