package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/streams"
)

func init() { addCommand(newRunsCmd) }

func newRunsCmd() *cobra.Command {
	var src sourceFlags
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the runs on a server with their state",
		Long: "List every run that has messages or a learner checkpoint on the server: its state\n" +
			"(finished, stopped or running at update N, or no checkpoint yet), the updates done, the\n" +
			"policy version, the environment steps, the messages stored and the rspo revisions that\n" +
			"trained it (- when none was recorded). With --data it reads a store directly.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			js, closeFn, err := src.open(cmd.Context(), "rspo-runs")
			if err != nil {
				return err
			}
			defer closeFn()
			runs, err := listRuns(cmd.Context(), js)
			if err != nil {
				return err
			}
			return writeRuns(cmd.OutOrStdout(), runs)
		},
	}
	src.register(cmd.Flags())
	return cmd
}

// runInfo is what `rspo runs` shows of one run.
type runInfo struct {
	name     string
	messages uint64
	cp       *learnersvc.Checkpoint
	cpErr    error
	// revisions trained it (pipeline.RunRevisions); revErr if unreadable.
	revisions []string
	revErr    error
}

// code is what the CODE column shows of the revisions that trained the run.
func (r runInfo) code() string {
	switch {
	case r.revErr != nil:
		return "unreadable: " + r.revErr.Error()
	case len(r.revisions) == 0:
		return "-"
	}
	return strings.Join(shortRevisions(r.revisions), ",")
}

// state describes the run's progress from its learner checkpoint.
func (r runInfo) state() string {
	switch {
	case r.cpErr != nil:
		return "checkpoint unreadable: " + r.cpErr.Error()
	case r.cp == nil:
		return "no checkpoint"
	}
	state := fmt.Sprintf("unfinished (update %d)", r.cp.Update)
	if r.cp.Finished {
		state = "finished"
	}
	if n := len(r.cp.ShortCycles); n > 0 {
		state += fmt.Sprintf(", %d cycles short of exploration", n)
	}
	return state
}

// listRuns gathers the runs with messages or a learner checkpoint, sorted
// by name.
func listRuns(ctx context.Context, js jetstream.JetStream) ([]runInfo, error) {
	counts, err := runMessages(ctx, js)
	if err != nil {
		return nil, err
	}
	byName := map[string]*runInfo{}
	for run, n := range counts {
		byName[run] = &runInfo{name: run, messages: n}
	}
	if err := addCheckpoints(ctx, js, byName); err != nil {
		return nil, err
	}
	out := make([]runInfo, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		r := byName[name]
		if r.cp != nil {
			r.revisions, r.revErr = pipeline.RunRevisions(ctx, js, name)
		}
		out = append(out, *r)
	}
	return out, nil
}

// checkpointSuffix ends the state key of a learner checkpoint.
const checkpointSuffix = ".learner.checkpoint"

// addCheckpoints reads every learner checkpoint of the state bucket into
// byName, adding runs that have no messages left.
func addCheckpoints(ctx context.Context, js jetstream.JetStream, byName map[string]*runInfo) error {
	kv, err := js.KeyValue(ctx, streams.BucketState)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("bucket %s: %w", streams.BucketState, err)
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return fmt.Errorf("bucket %s: %w", streams.BucketState, err)
	}
	for key := range keys.Keys() {
		run, ok := strings.CutSuffix(key, checkpointSuffix)
		if !ok || streams.ValidateRun(run) != nil {
			continue
		}
		r := byName[run]
		if r == nil {
			r = &runInfo{name: run}
			byName[run] = r
		}
		entry, err := kv.Get(ctx, key)
		if err != nil {
			r.cpErr = err
			continue
		}
		cp, err := learnersvc.DecodeCheckpoint(entry.Value())
		r.cp, r.cpErr = &cp, err
	}
	return nil
}

func writeRuns(out io.Writer, runs []runInfo) error {
	if len(runs) == 0 {
		_, err := fmt.Fprintln(out, "no runs on this server")
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "RUN\tSTATE\tUPDATES\tPOLICY\tENV STEPS\tMESSAGES\tCODE")
	for _, r := range runs {
		updates, version, steps := "-", "-", "-"
		if r.cp != nil && r.cpErr == nil {
			updates, version = fmt.Sprint(r.cp.Update), fmt.Sprint(r.cp.Version)
			steps = fmt.Sprint(r.cp.EnvStepsActor + r.cp.EnvStepsExplorer)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.name, r.state(), updates, version, steps, r.messages, r.code())
	}
	return w.Flush()
}
