package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmsvc"
	"github.com/rspo-dev/rspo/prm/trajfile"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

func init() { addCommand(newPRMCmd) }

func newPRMCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prm",
		Short: "Train, evaluate and publish the dense process reward model",
		Long: "The PRM scores every step of a trajectory, r̂_t ∈ (−1, 1), and is trained so that Σ_t r̂_t matches\n" +
			"the outcome reward (docs/algorithm.md eq. 5–7). Train it from trajectory files or from recorded runs, check how\n" +
			"informative it is (held-out AUC and Spearman ρ), and publish it to a run for explorers and `serve prm`.",
	}
	cmd.AddCommand(newPRMTrainCmd(), newPRMEvalCmd(), newPRMRandomCmd(), newPRMCollectCmd())
	return cmd
}

// prmSourceFlags select training or evaluation data: recorded runs and
// trajectory files.
type prmSourceFlags struct {
	runs     []string
	fromSeq  []uint
	subjects []string
	files    []string
}

func (f *prmSourceFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.runs, "run", nil, "recorded run to read (repeatable: several runs, e.g. an easier preset's, add outside knowledge)")
	fs.UintSliceVar(&f.fromSeq, "from-seq", nil, "skip messages before this stream sequence: once for every --run, or once per --run in order")
	fs.StringSliceVar(&f.subjects, "subjects", kindNames(prmsvc.DefaultSubjects), "subjects read from each run")
	fs.StringArrayVar(&f.files, "file", nil, "trajectory file as rspo prm collect writes it, or one schemas.EncodeTrajectoryBatch stream (repeatable)")
}

// sources returns the run sources, or an error saying how to fix the flags.
func (f *prmSourceFlags) sources() ([]prmsvc.Source, error) {
	if len(f.runs) == 0 && len(f.files) == 0 {
		return nil, errors.New("no data: give --run NAME (a recorded run) or --file FILE, or both")
	}
	if len(f.fromSeq) > 1 && len(f.fromSeq) != len(f.runs) {
		return nil, fmt.Errorf("%d --from-seq values for %d --run flags: give one for all runs or one per run", len(f.fromSeq), len(f.runs))
	}
	if len(f.fromSeq) > 0 && len(f.runs) == 0 {
		return nil, errors.New("--from-seq needs --run")
	}
	srcs := make([]prmsvc.Source, len(f.runs))
	for i, run := range f.runs {
		if err := streams.ValidateRun(run); err != nil {
			return nil, fmt.Errorf("--run: %w", err)
		}
		srcs[i] = prmsvc.Source{Run: run, Subjects: kinds(f.subjects)}
		switch len(f.fromSeq) {
		case 1:
			srcs[i].FromSeq = uint64(f.fromSeq[0])
		case len(f.runs):
			srcs[i].FromSeq = uint64(f.fromSeq[i])
		}
	}
	return srcs, nil
}

// load reads every file and replays every run (opening store only if
// there are runs). It reports what it read to stderr.
func (f *prmSourceFlags) load(ctx context.Context, store *sourceFlags, stderr io.Writer) ([]*schemas.Trajectory, error) {
	srcs, err := f.sources()
	if err != nil {
		return nil, err
	}
	var all []*schemas.Trajectory
	for _, path := range f.files {
		trajs, err := trajfile.Read(path)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(stderr, "read %d trajectories from %s\n", len(trajs), path)
		all = append(all, trajs...)
	}
	if len(srcs) == 0 {
		return all, nil
	}
	js, closeStore, err := store.open(ctx, "rspo-prm")
	if err != nil {
		return nil, err
	}
	defer closeStore()
	trajs, st, err := prmsvc.Collect(ctx, js, srcs)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "read %d trajectories (%d successes) from %d run(s); %d undecodable, %d duplicates skipped\n",
		st.Trajectories, st.Successes, len(srcs), st.Undecodable, st.Duplicates)
	return append(all, trajs...), nil
}

// prmPublishFlags publish a model to a run.
type prmPublishFlags struct {
	publish bool
	asRun   string
	cycle   int64
}

func (f *prmPublishFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.publish, "publish", false, "store the model in the PRM object store and announce it with prm.published (needs --as-run)")
	fs.StringVar(&f.asRun, "as-run", "", "run to publish the model to")
	fs.Int64Var(&f.cycle, "cycle", 0, "cycle recorded in the prm.published event")
}

func (f *prmPublishFlags) validate() error {
	switch {
	case f.publish && f.asRun == "":
		return errors.New("--publish needs --as-run RUN (the run whose explorers will use the model)")
	case !f.publish && f.asRun != "":
		return errors.New("--as-run is only used with --publish")
	case f.publish:
		if err := streams.ValidateRun(f.asRun); err != nil {
			return fmt.Errorf("--as-run: %w", err)
		}
	}
	return nil
}

// run publishes m if asked, reporting the event to stderr.
func (f *prmPublishFlags) run(ctx context.Context, store *sourceFlags, m *prm.Model, metrics map[string]float64, stderr io.Writer) error {
	if !f.publish {
		return nil
	}
	js, closeStore, err := store.open(ctx, "rspo-prm")
	if err != nil {
		return err
	}
	defer closeStore()
	if err := streams.Ensure(ctx, js, streams.Options{}); err != nil {
		return err
	}
	e, err := prmsvc.Publish(ctx, js, f.asRun, m, prmsvc.PublishOptions{Cycle: f.cycle, Metrics: metrics})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "published PRM v%d to run %s as %s/%s\n", e.PRMVersion, e.Run, streams.BucketPRM, e.Object)
	return nil
}

// prmTrainFlags map onto prm.TrainConfig (and the featurizer and model shape).
type prmTrainFlags struct {
	dim, hidden, batch, epochs, patience int
	lr, holdout, weightDecay             float64
	weighting, target, warm              string
	seed                                 uint64
	version                              int64
	actionContext                        bool
	feat                                 prmFeaturizerFlags
}

func (f *prmTrainFlags) register(fs *pflag.FlagSet) {
	f.dim, f.hidden, f.batch, f.epochs, f.patience = 256, 16, 32, 500, 20
	countVar(fs, &f.dim, "dim", "feature dimension of the hashed projection")
	countVar(fs, &f.hidden, "hidden", "hidden width of the MLP head")
	countVar(fs, &f.batch, "batch", "trajectories per Adam step")
	countVar(fs, &f.epochs, "epochs", "most epochs")
	countVar(fs, &f.patience, "patience", "stop after this many epochs without held-out improvement")
	fs.Float64Var(&f.lr, "lr", 0, "Adam learning rate (default 3e-3)")
	fs.Float64Var(&f.holdout, "holdout", 0, "held-out fraction, stratified by success (default 0.2)")
	fs.Float64Var(&f.weightDecay, "weight-decay", 0, "decoupled weight decay per step (default 0)")
	fs.StringVar(&f.weighting, "weighting", string(prm.WeightBalanced), "loss weighting: balanced (successes and failures count equally) or none")
	fs.StringVar(&f.target, "target", string(prm.TargetSum), "fit target: sum (Σ_t r̂_t to the outcome, eq. 7) or step (every r̂_t to the outcome: an action value, for --explore-tilt)")
	fs.StringVar(&f.warm, "warm", "", "warm-start from this PRM snapshot (keeps its featurizer and shape)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the projection, the init, the split and the shuffling")
	fs.Int64Var(&f.version, "version", 0, "version of the trained model (default: the warm start's + 1, or 1)")
	fs.BoolVar(&f.actionContext, "action-context", false, "featurize what the observation says about each action's object (the line naming it, its words the instruction names, its numbers against the instruction's)")
	f.feat.register(fs)
}

// config builds the training configuration, loading the warm start or
// building the featurizer (which may ask an embeddings server its length).
func (f *prmTrainFlags) config(ctx context.Context, fs *pflag.FlagSet) (prm.TrainConfig, error) {
	cfg := prm.TrainConfig{
		Model: prm.ModelConfig{Hidden: f.hidden}, Version: f.version, LearningRate: f.lr, BatchSize: f.batch,
		MaxEpochs: f.epochs, Patience: f.patience, HoldoutFraction: f.holdout,
		Weighting: prm.Weighting(f.weighting), Target: prm.Target(f.target), WeightDecay: f.weightDecay, Seed: f.seed,
	}
	if err := f.feat.check(fs, f.warm != ""); err != nil {
		return cfg, err
	}
	if f.warm != "" {
		m, err := prm.LoadFile(f.warm)
		if err != nil {
			return cfg, fmt.Errorf("--warm: %w", err)
		}
		cfg.WarmStart = m
		return cfg, nil
	}
	if f.feat.name == llm.EmbeddingsFeaturizerName {
		feat, err := f.feat.embeddings(ctx)
		cfg.Featurizer = feat
		return cfg, err
	}
	feat, err := prm.NewHashProjection(prm.HashProjectionConfig{Dim: f.dim, Seed: f.seed, ActionContext: f.actionContext})
	if err != nil {
		return cfg, fmt.Errorf("--dim: %w", err)
	}
	cfg.Featurizer = feat
	return cfg, nil
}

func newPRMTrainCmd() *cobra.Command {
	var (
		store  sourceFlags
		src    prmSourceFlags
		tf     prmTrainFlags
		pub    prmPublishFlags
		out    string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train a PRM on trajectories with outcomes and report how informative it is",
		Long: "Train the PRM head on the class-weighted trajectory-level MSE against the outcome reward, with Adam,\n" +
			"a held-out split (stable per trajectory id) and early stopping. Data comes from trajectory files and/or\n" +
			"recorded runs (their on-policy trajectories and swapped explorer records, read through replay).\n" +
			"Prints the report: held-out MSE, Spearman ρ of R̂ vs R, and the AUC of R̂ for success vs failure.",
		Example: "  rspo prm collect --preset easy --tasks 1024 --per-task 4 --out easy.arrow\n" +
			"  rspo prm train --file easy.arrow --out prm.bin\n" +
			"  rspo prm train --run easy-run --run medium-run --from-seq 1 --out prm.bin --publish --as-run hard-run",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("--out FILE is required: where to write the trained snapshot")
			}
			if _, err := src.sources(); err != nil {
				return err
			}
			if err := pub.validate(); err != nil {
				return err
			}
			ctx, stderr := cmd.Context(), cmd.ErrOrStderr()
			cfg, err := tf.config(ctx, cmd.Flags())
			if err != nil {
				return err
			}
			trajs, err := src.load(ctx, &store, stderr)
			if err != nil {
				return err
			}
			m, rep, err := prm.Train(ctx, trajs, cfg)
			if err != nil {
				return err
			}
			if err := prm.SaveFile(out, m); err != nil {
				return err
			}
			if err := printTrainReport(cmd.OutOrStdout(), rep, out, asJSON); err != nil {
				return err
			}
			return pub.run(ctx, &store, m, rep.Metrics(), stderr)
		},
	}
	store.register(cmd.Flags())
	src.register(cmd.Flags())
	tf.register(cmd.Flags())
	pub.register(cmd.Flags())
	cmd.Flags().StringVar(&out, "out", "", "write the trained PRM snapshot here (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the training report as JSON")
	return cmd
}

// printTrainReport writes the report as JSON or as a short summary.
func printTrainReport(w io.Writer, r prm.TrainReport, out string, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	h := r.HeldoutEval
	_, err := fmt.Fprintf(w, "PRM v%d trained on %d trajectories (%d successes), %d steps (%d distinct)\n"+
		"split: %d train / %d held out (%d successes); weighting %s (success ×%.3g, failure ×%.3g)\n"+
		"epochs: %d (best %d), %.1fs\n"+
		"train MSE %.4f; held-out MSE %.4f (constant-mean baseline %.4f)\n"+
		"held-out Spearman ρ(R̂, R) %.3f, AUC(success vs failure) %.3f; mean R̂ success %.3f, failure %.3f\n"+
		"wrote %s\n",
		r.Version, r.Trajectories, r.Successes, r.Steps, r.UniqueSteps,
		r.Train, r.Heldout, h.Successes, r.Weighting, r.SuccessWeight, r.FailureWeight,
		r.Epochs, r.BestEpoch, r.Seconds,
		r.TrainMSE, h.MSE, r.BaselineMSE,
		h.Spearman, h.AUC, h.MeanScoreSuccess, h.MeanScoreFailure, out)
	return err
}

func newPRMEvalCmd() *cobra.Command {
	var (
		store  sourceFlags
		src    prmSourceFlags
		model  string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure how informative a PRM is on other trajectories",
		Long: "Score trajectories (files and/or recorded runs) with a PRM snapshot and report the MSE of R̂ against\n" +
			"the outcome, Spearman ρ(R̂, R) and the AUC of R̂ for success vs failure — e.g. a PRM trained on an easy\n" +
			"preset evaluated on a hard run.",
		Example: "  rspo prm eval --model prm.bin --file hard.arrow",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if model == "" {
				return errors.New("--model FILE is required: the PRM snapshot to evaluate")
			}
			m, err := prm.LoadFile(model)
			if err != nil {
				return err
			}
			trajs, err := src.load(cmd.Context(), &store, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			e, err := prm.EvaluateContext(cmd.Context(), m, trajs)
			if err != nil {
				return err
			}
			return printEvaluation(cmd.OutOrStdout(), m, e, asJSON)
		},
	}
	store.register(cmd.Flags())
	src.register(cmd.Flags())
	cmd.Flags().StringVar(&model, "model", "", "PRM snapshot to evaluate (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the evaluation as JSON")
	return cmd
}

func printEvaluation(w io.Writer, m *prm.Model, e prm.Evaluation, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(struct {
			PRMVersion int64 `json:"prm_version"`
			prm.Evaluation
		}{m.Version, e})
	}
	_, err := fmt.Fprintf(w, "PRM v%d on %d trajectories (%d successes): MSE %.4f, Spearman ρ(R̂, R) %.3f, AUC %.3f; mean R̂ success %.3f, failure %.3f\n",
		m.Version, e.Trajectories, e.Successes, e.MSE, e.Spearman, e.AUC, e.MeanScoreSuccess, e.MeanScoreFailure)
	return err
}

func newPRMRandomCmd() *cobra.Command {
	var (
		store sourceFlags
		pub   prmPublishFlags
		seed  uint64
		out   string
	)
	cmd := &cobra.Command{
		Use:   "random",
		Short: "Write an untrained (random) PRM: the control mode",
		Long: "Write a PRM with random weights and no training, the control that separates the PRM's information\n" +
			"from the explorer's extra sampling. Its scores vary by step but say nothing about outcomes.",
		Example: "  rspo prm random --seed 7 --out random.bin --publish --as-run control-run",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("--out FILE is required")
			}
			if err := pub.validate(); err != nil {
				return err
			}
			m := prm.Random(seed)
			if err := prm.SaveFile(out, m); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "random PRM (seed %d, version %d) written to %s\n", seed, m.Version, out)
			return pub.run(cmd.Context(), &store, m, nil, cmd.ErrOrStderr())
		},
	}
	store.register(cmd.Flags())
	pub.register(cmd.Flags())
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the random weights")
	cmd.Flags().StringVar(&out, "out", "", "write the snapshot here (required)")
	return cmd
}

// kindNames and kinds convert subject kinds to and from flag values.
func kindNames(ks []streams.SubjectKind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

func kinds(names []string) []streams.SubjectKind {
	out := make([]streams.SubjectKind, len(names))
	for i, n := range names {
		out[i] = streams.SubjectKind(n)
	}
	return out
}
