package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/experiments"
)

func init() { addCommand(newExperimentCmd) }

// experimentOptions are the settings of `rspo experiment`.
type experimentOptions struct {
	suite     string
	suitesDir string
	quick     bool
	out       string
	data      string
	noRun     bool
	keep      bool
	carry     bool
	perRun    bool
	variants  []string
	revisions []string
}

func newExperimentCmd() *cobra.Command {
	var o experimentOptions
	cmd := &cobra.Command{
		Use:   "experiment",
		Short: "Rerun the experiment suites and write docs/experiments.md with tables and plots",
		Long: "Run every (variant, seed) of the chosen suites one after the other, each as its own\n" +
			"training run under --data (runs that already finished are kept, so an interrupted\n" +
			"suite resumes), aggregate mean ± sd over seeds, and write the page, the plots and\n" +
			"the per-run summaries under --out.",
		Example: "  rspo experiment --quick                        # a few minutes: every suite's quick variant\n" +
			"  rspo experiment --suite household --data runs/experiments\n" +
			"  rspo experiment --suite all --no-run           # only re-aggregate finished runs\n" +
			"  rspo experiment --suite all --no-run --revision REV --out docs   # the project's page, from one revision's runs",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runExperiments(cmd, o) },
	}
	fs := cmd.Flags()
	fs.StringVar(&o.suite, "suite", "all", "suite name (the \"name\" in its file) or all")
	fs.StringVar(&o.suitesDir, "suites", filepath.Join("experiments", "suites"), "directory of the suite JSON files")
	fs.BoolVar(&o.quick, "quick", false, "use each suite's quick override (minutes instead of hours)")
	fs.StringVar(&o.out, "out", "", "write experiments.md and experiments/ (plots, run summaries) here (default DATA/page; --out docs regenerates the project's page)")
	fs.StringVar(&o.data, "data", "runs/experiments", "data directory of the runs (stores, buffers, reports)")
	fs.BoolVar(&o.noRun, "no-run", false, "train nothing; aggregate the runs that finished")
	fs.BoolVar(&o.carry, "carry", true, "a suite with no finished runs under --data keeps its figures from the page already at --out (its experiments/runs_<suite>.json), marked as not rerun; --carry=false lists it as not run instead")
	fs.BoolVar(&o.perRun, "sources-per-run", false, "every run trains its built-in PRM source runs and their PRM in its own store, as rspo run on a fresh data directory does (by default a suite trains them once and copies them into each run's store: the same recorded runs, a fraction of the time)")
	fs.StringSliceVar(&o.variants, "variant", nil, "train only these variants of --suite (comma-separated or repeated; names as in the suite file), e.g. to split a suite between processes or machines sharing --data; the page aggregates every finished run")
	fs.StringSliceVar(&o.revisions, "revision", nil, "aggregate only the runs trained by these rspo revisions (prefixes of the revision each run recorded, e.g. a short commit hash; comma-separated or repeated): runs of other revisions count as not finished, and a suite with none is carried or listed as not run")
	fs.BoolVar(&o.keep, "keep-stores", false, "keep every finished run's JetStream store and buffer (hundreds of MB each); by default only runs a PRM source reads are kept")
	return cmd
}

func runExperiments(cmd *cobra.Command, o experimentOptions) error {
	all, err := experiments.LoadSuites(o.suitesDir)
	if err != nil {
		return fmt.Errorf("--suites: %w", err)
	}
	suites, err := pickSuites(all, o.suite)
	if err != nil {
		return err
	}
	if err := checkVariants(suites, o.variants); err != nil {
		return err
	}
	r := &experiments.Runner{DataDir: o.data, Quick: o.quick, Log: cmd.ErrOrStderr(), KeepStores: o.keep, KeepSourcesPerRun: o.perRun, Revision: codeRevision(), Only: o.variants, Revisions: o.revisions}
	out := o.out
	if out == "" { // never the project's docs/ unless asked: a rerun must not overwrite the committed page
		out = filepath.Join(o.data, "page")
	}
	if !o.noRun {
		for _, s := range suites {
			if err := r.Run(cmd.Context(), s); err != nil {
				return err
			}
		}
	}
	var results []*experiments.SuiteResult
	for _, s := range all {
		res, err := r.Aggregate(cmd.Context(), s)
		if err != nil {
			return err
		}
		if res.NumRuns() == 0 && o.carry {
			if res, err = carriedResult(cmd, out, s, o.quick, res); err != nil {
				return err
			}
		}
		results = append(results, res)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	page, err := experiments.WritePage(out, results, experiments.PageOptions{Quick: o.quick, SuitesDir: o.suitesDir})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", page)
	return err
}

// carriedResult is suite s's result read back from the page at out, or
// fresh (no runs) when that page has none of s.
func carriedResult(cmd *cobra.Command, out string, s *experiments.Suite, quick bool, fresh *experiments.SuiteResult) (*experiments.SuiteResult, error) {
	res, err := experiments.LoadPageResult(out, s, quick)
	if errors.Is(err, os.ErrNotExist) {
		return fresh, nil
	}
	if err != nil {
		return nil, fmt.Errorf("suite %s: %w (--carry=false lists it as not run)", s.Name, err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "suite %s: no finished runs under --data; keeping the page's figures from %s\n", s.Name, res.CarriedFrom)
	return res, nil
}

// checkVariants fails on a --variant that names no variant of the chosen
// suite (or on --variant with --suite all, where names are ambiguous).
func checkVariants(suites []*experiments.Suite, variants []string) error {
	if len(variants) == 0 {
		return nil
	}
	if len(suites) != 1 {
		return errors.New("--variant needs one --suite: variant names are a suite's own")
	}
	var names []string
	for _, v := range suites[0].Variants {
		names = append(names, v.Name)
	}
	for _, v := range variants {
		if !slices.Contains(names, v) {
			return fmt.Errorf("--variant %q: suite %s has no such variant (known: %v)", v, suites[0].Name, names)
		}
	}
	return nil
}

// pickSuites returns the named suite, or all of them.
func pickSuites(all []*experiments.Suite, name string) ([]*experiments.Suite, error) {
	if name == "all" {
		return all, nil
	}
	var names []string
	for _, s := range all {
		if s.Name == name {
			return []*experiments.Suite{s}, nil
		}
		names = append(names, s.Name)
	}
	return nil, fmt.Errorf("--suite %q: no such suite (known: %v, or all)", name, names)
}
