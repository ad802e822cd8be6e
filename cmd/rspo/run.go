package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/streams"
)

func init() { addCommand(newRunCmd) }

// runOptions are the settings of `rspo run`; a --config file holds the same
// keys as JSON, and flags given on the command line override it.
type runOptions = pipeline.Options

// defaultRunOptions are the defaults of `rspo run`: RSPO+GiGPO (the tilted
// recipe) on household.
func defaultRunOptions() runOptions { return pipeline.DefaultOptions() }

func newRunCmd() *cobra.Command {
	o := defaultRunOptions()
	var nf natsFlags
	var configFile string
	var asJSON, verbose, syncAlways, printConfig bool
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Train an agent end to end: every stage in one process over JetStream",
		Long: "Train a policy with RSPO (or a baseline) end to end. Without --nats (or NATS_URL) an\n" +
			"embedded JetStream server stores the run under --data; with either every stage talks to\n" +
			"that server instead. The same command resumes an interrupted run (Ctrl-C is safe).\n" +
			"DATA/RUN/report fills as it trains: config.yaml before the first update, the metrics as\n" +
			"CSV, JSON lines and TensorBoard events as each update happens; at the end the plots,\n" +
			"summary.json and report.html (the result first).",
		Example: "  rspo run                                   # RSPO+GRPO on household, 30 updates\n" +
			"  rspo run --rspo=false --algo ppo --updates 60\n" +
			"  rspo run --env shop --explorer frozen --seed 2\n" +
			"  rspo run --dense-only                      # the reward-hacking baseline\n" +
			"  rspo run --print-config > my.yaml        # every setting, its default filled in\n" +
			"  rspo run --config my.yaml --seed 3 --json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var file *pipeline.OptionsFile
			if configFile != "" {
				var err error
				if file, err = loadRunConfig(cmd.Flags(), configFile, &o); err != nil {
					return err
				}
			}
			if err := applyRecipe(cmd.Flags(), file, &o); err != nil {
				return err
			}
			if printConfig {
				return printRunConfig(cmd.OutOrStdout(), o, file)
			}
			if !cmd.Flags().Changed("nats") && os.Getenv("NATS_URL") == "" {
				nf.url = "" // neither --nats nor NATS_URL: the embedded server
			}
			if syncAlways && nf.url != "" {
				return errors.New("--sync-always: it configures the embedded server; give it to the server of --nats instead")
			}
			return runTraining(cmd, o, nf, runOutput{asJSON: asJSON, verbose: verbose, syncAlways: syncAlways, file: file})
		},
	}
	fs := cmd.Flags()
	registerSettings(fs, &o, stageRun)
	fs.StringVar(&configFile, "config", "", configUsage)
	fs.BoolVar(&printConfig, "print-config", false, "print the effective settings (every default filled in) as YAML and exit; refuses settings that do not validate")
	fs.BoolVar(&asJSON, "json", false, "print the summary as JSON on stdout")
	fs.BoolVar(&verbose, "verbose", false, "log every stage's progress")
	fs.BoolVar(&syncAlways, "sync-always", false, "embedded server: fsync every write before acknowledging it")
	nf.register(fs)
	nf.registerReplicas(fs)
	registerMetricsFlag(fs)
	cmd.SetUsageFunc(groupedUsage)
	return cmd
}

// runOutput are the settings of `rspo run` that do not define the run.
type runOutput struct {
	asJSON, verbose, syncAlways bool
	// file is the --config file, whose lines errors name.
	file *pipeline.OptionsFile
}

func runTraining(cmd *cobra.Command, o runOptions, nf natsFlags, out runOutput) error {
	asJSON, verbose := out.asJSON, out.verbose
	cfg, err := o.Config()
	if err != nil {
		return out.file.Place(err)
	}
	if nf.url != "" {
		cfg.NATSURL, cfg.Connect = nf.url, nf.options("rspo-run")
	}
	cfg.SyncAlways, cfg.Revision = out.syncAlways, codeRevision()
	if err := nf.applyReplicas(&cfg); err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelInfo
	}
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if err := cfg.Validate(); err != nil {
		return err
	}
	stop, err := startMetrics(cmd, &cfg)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Fprintf(stderr, "rspo: run %s — %s, %s, %s; %d updates of %d tasks × %d rollouts\n",
		cfg.Learner.Run, o.Env, o.Algo, modeText(o), o.Updates, o.Tasks, o.GroupSize)
	if cfg.NATSURL == "" {
		fmt.Fprintln(stderr, embeddedLine(cfg))
	}
	if note := presetNote(o); note != "" {
		fmt.Fprintln(stderr, note)
	}
	done := reportProgress(stderr, &cfg)
	sum, err := pipeline.Run(cmd.Context(), cfg)
	done()
	if err != nil {
		if cmd.Context().Err() != nil {
			return interrupted{run: cfg.Learner.Run}
		}
		return err
	}
	if asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	return printSummary(cmd.OutOrStdout(), sum)
}

// sourceWhat names what a run's source steps paid for: its PRM's source
// runs, its start (a run's or demonstrations'), or both.
func sourceWhat(s pipeline.Summary) string {
	switch {
	case s.InitPolicy != nil && s.SourcePRM != nil:
		return "the runs its PRM and its start came from"
	case s.InitPolicy != nil && s.InitPolicy.Run == "":
		return "the demonstrations its start was trained on"
	case s.InitPolicy != nil:
		return "the runs its start came from"
	}
	return "the PRM's source runs"
}

// initPolicyLine says what the run's π_θ starts from.
func initPolicyLine(p pipeline.InitPolicy) string {
	from := p.Source
	switch {
	case p.Source == pipeline.InitPolicySource:
		rates := make([]string, 0, len(p.Candidates))
		for _, run := range slices.Sorted(maps.Keys(p.Candidates)) {
			rates = append(rates, fmt.Sprintf("%.2f", p.Candidates[run]))
		}
		from = fmt.Sprintf("the final policy of %s, the best of its %d source runs on %d held-out train tasks (success %s)",
			p.Run, len(p.Candidates), pipeline.SourceStartEpisodes, strings.Join(rates, ", "))
	case p.Run != "":
		from = fmt.Sprintf("the final policy of %s (version %d)", p.Run, p.Version)
	}
	return fmt.Sprintf("rspo: π_θ starts from %s", from)
}

// sourceRunLine is what rspo run prints as built-in PRM source run i of
// n, src, named run, starts: which stage of the curriculum it is, how long
// it trains and where.
func sourceRunLine(src pipeline.Config, run string, i, n int) string {
	what := "the base algorithm"
	if len(src.Sources) > 0 { // a curriculum's second stage (envs.StagedCurriculum)
		what = "the tilted recipe, steered by a PRM of the runs above"
	}
	return fmt.Sprintf("rspo: PRM source run %d of %d: %s (%s, %d updates, on %s; trained once, reused by later runs)",
		i, n, run, what, src.Learner.Updates, envOptionsText(src.Learner.EnvOptions))
}

// staleSourceLine warns that the source run just named was recorded by
// rspo of other revisions (by; none recorded: from before rspo recorded
// them) than this one's, rev, and says how to record it again.
func staleSourceLine(rev string, by []string) string {
	was := "an rspo that did not record its revision"
	if len(by) > 0 {
		was = "rspo " + strings.Join(shortRevisions(by), ", ")
	}
	return fmt.Sprintf("rspo: warning: this source run was recorded by %s, not by this build (%s): it is reused as recorded, and a change since does not reach it or its PRM; to record the source runs with this build, give --data a new directory", was, pipeline.ShortRevision(rev))
}

// shortRevisions shortens each of revs for people (pipeline.ShortRevision).
func shortRevisions(revs []string) []string {
	short := make([]string, len(revs))
	for i, r := range revs {
		short[i] = pipeline.ShortRevision(r)
	}
	return short
}

func modeText(o runOptions) string {
	switch {
	case o.DenseOnly:
		return "dense-only (trained on the PRM)"
	case o.RSPO:
		if o.Explore.Tilt > 0 {
			return fmt.Sprintf("RSPO (explorer %s tilted, λ=%g, α=%g, k=%d)", o.Explore.Mode, o.Explore.Tilt, o.Alpha, o.K)
		}
		return fmt.Sprintf("RSPO (explorer %s, α=%g, k=%d)", o.Explore.Mode, o.Alpha, o.K)
	}
	return "no RSPO"
}

func printSummary(w io.Writer, s pipeline.Summary) error {
	fmt.Fprintf(w, "run %s finished: %d updates, %d environment steps (actors %d, explorers %d), %.1fs, peak memory %.0f MiB\n",
		s.Run, s.Updates, s.EnvSteps, s.EnvStepsActor, s.EnvStepsExplorer, s.WallSeconds, float64(s.PeakRSSBytes)/(1<<20))
	fmt.Fprint(w, shortCyclesWarning(s.ShortCycles, "the learner stopped waiting for explorers or the buffer (its log says which), so their updates sampled a short buffer"))
	if s.EnvStepsSource > 0 {
		fmt.Fprintf(w, "  %s took %d environment steps more: %d in all\n", sourceWhat(s), s.EnvStepsSource, s.EnvSteps+s.EnvStepsSource)
	}
	if p := s.SourcePRM; p != nil {
		how := "trained by this run and stored for later runs"
		if p.Reused {
			how = "trained by an earlier run, reused"
		}
		fmt.Fprintf(w, "  its PRM (%s, %d trajectories, held-out AUC %.3f): %s\n", p.Object, p.Report.Trajectories, p.Report.HeldoutEval.AUC, how)
	}
	keys := make([]string, 0, len(s.Final))
	for k, v := range s.Final {
		score, ok := strings.CutSuffix(k, "_score")
		if ok && s.Final[score+"_success_rate"] == v {
			continue // an outcome of 0 or 1 (the household): the score is the success rate again
		}
		if ok || strings.HasSuffix(k, "_success_rate") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  %-40s %.3f\n", k, s.Final[k])
	}
	_, err := fmt.Fprintf(w, "report: %s\n", s.ReportDir)
	return err
}

// embeddedLine describes the embedded server `rspo run` starts.
func embeddedLine(cfg pipeline.Config) string {
	sync := fmt.Sprintf("fsync every %s", streams.EmbeddedSyncInterval)
	if cfg.SyncAlways {
		sync = "fsync on every write"
	}
	return fmt.Sprintf("rspo: embedded NATS server on %s only (loopback, a free port), store in %s, %s",
		pipeline.EmbeddedHost, filepath.Join(cfg.DataDir, "nats"), sync)
}

// applyRecipe sets the recipe's values on every option the user gave
// neither as a flag nor in the config file.
func applyRecipe(fs *pflag.FlagSet, file *pipeline.OptionsFile, o *runOptions) error {
	given := func(key string) bool {
		if fs.Changed(key) {
			return true
		}
		if file != nil {
			_, inFile := file.Pos[key]
			return inFile
		}
		return false
	}
	r, err := o.WithRecipe(given)
	if err != nil {
		return fmt.Errorf("--recipe: %w", err)
	}
	*o = r
	return nil
}

// presetNote warns where train and eval success measure different task
// mixes: a setting whose train tasks lack some task types (the household's
// easy preset trains only pick_and_place, medium four of six) while its
// eval splits hold every type.
func presetNote(o runOptions) string {
	env, err := envs.New(o.Env, o.EnvOptions)
	if err != nil {
		return ""
	}
	tt, ok := env.(envs.TrainTaskTyper)
	if !ok {
		return ""
	}
	train, all := tt.TrainTaskTypes(), env.TaskTypes()
	if len(train) == len(all) {
		return ""
	}
	var missing []string
	for _, t := range all {
		if !slices.Contains(train, t) {
			missing = append(missing, t)
		}
	}
	return fmt.Sprintf("rspo: note: this setting trains %d of the %d task types (never %s); the eval splits hold all %d, "+
		"so eval success stays below train success (--eval-splits train evaluates held-out train tasks instead)",
		len(train), len(all), strings.Join(missing, ", "), len(all))
}

// envOptionsText prints environment options as sorted key=value pairs.
func envOptionsText(opts map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		parts = append(parts, k+"="+opts[k])
	}
	return strings.Join(parts, " ")
}

// shortCyclesWarning is the line that warns of a run's cycles trained
// without all their exploration (learnersvc.Checkpoint.ShortCycles),
// saying why; empty when there are none.
func shortCyclesWarning(cycles []int64, why string) string {
	if len(cycles) == 0 {
		return ""
	}
	parts := make([]string, len(cycles))
	for i, c := range cycles {
		parts[i] = strconv.FormatInt(c, 10)
	}
	return fmt.Sprintf("  warning: %d of its cycles (%s) trained without all their exploration: %s\n", len(cycles), strings.Join(parts, ", "), why)
}

// sourceProgressEvery is how often a source run's update is printed as a
// line when the output is no terminal (a terminal shows each on a bar).
const sourceProgressEvery = 10

// prmEpochEvery is how often an epoch of the source PRM's training is
// printed.
const prmEpochEvery = 10

// prmEpochLine is the progress line of a source PRM's training after
// epoch p, and whether to print it: every prmEpochEvery epochs and the last.
func prmEpochLine(p prm.EpochProgress) (string, bool) {
	if p.Epoch%prmEpochEvery != 0 && !p.Last {
		return "", false
	}
	line := fmt.Sprintf("  PRM epoch %d: held-out loss %.4f, best %.4f at epoch %d", p.Epoch, p.Loss, p.BestLoss, p.BestEpoch)
	if p.Last {
		return line + fmt.Sprintf("; done, keeping epoch %d", p.BestEpoch), true
	}
	return line + fmt.Sprintf(" (stops after %d epochs without a better one)", p.Patience), true
}

// reportProgress sets cfg's hooks to report to w how the run goes: each
// built-in source run's updates ("  source update …", every
// sourceProgressEvery-th off a terminal), each source PRM's training
// (prmEpochLine), then the run's own updates. Call the returned function
// once the run has ended, to end the last bar's line.
func reportProgress(w io.Writer, cfg *pipeline.Config) func() {
	pr := newProgress(w)
	var src *progress // the source run in hand, until the run's own first report
	endSource := func() {
		if src != nil {
			src.close()
			src = nil
		}
	}
	startSource := func() {
		src = newProgress(w)
		src.every, src.prefix = sourceProgressEvery, "  source "
	}
	cfg.Progress = func(r learnersvc.Progress) { endSource(); pr.update(r) }
	cfg.Phase = func(r learnersvc.Progress) { endSource(); pr.phase(r) }
	cfg.OnSource = func(run string, i, n int) {
		endSource()
		fmt.Fprintln(w, sourceRunLine(cfg.SourceRuns[i-1], run, i, n))
		startSource()
	}
	cfg.OnInitPolicy = func(p pipeline.InitPolicy) {
		endSource()
		fmt.Fprintln(w, initPolicyLine(p))
	}
	cfg.OnStaleSource = func(run string, by []string) {
		fmt.Fprintln(w, staleSourceLine(cfg.Revision, by))
	}
	cfg.SourceProgress = func(r learnersvc.Progress) {
		if src != nil {
			src.update(r)
		}
	}
	cfg.OnSourcePRM = func(n int) {
		// A later source stage trains its PRM before it is announced
		// (OnSource): the bar of the stage before it ends here.
		endSource()
		fmt.Fprintf(w, "rspo: training the PRM on the source runs' %d trajectories (once: later runs on these source runs reuse it)\n", n)
	}
	cfg.OnPRMEpoch = func(p prm.EpochProgress) {
		if line, ok := prmEpochLine(p); ok {
			fmt.Fprintln(w, line)
		}
	}
	return func() {
		endSource()
		pr.close()
	}
}
