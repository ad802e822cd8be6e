package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

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
		Short: "List the runs on a server with their state and size on disk",
		Long: "List every run that has messages, snapshots or a learner checkpoint on the server: its state\n" +
			"(finished; running, or interrupted, at update N), the updates done, the policy version, the\n" +
			"environment steps, the messages stored, its size on disk and the rspo revisions that trained it\n" +
			"(- when none was recorded). With --data it reads a store directly.\n\n" +
			"SIZE is the run's share of the server's streams (each stream's bytes in proportion to the run's\n" +
			"messages), its policy and PRM snapshots and, with --data, its files under the data directory\n" +
			"(the buffer's store, the report). A run is running while its learner holds its lease, or wrote\n" +
			"a checkpoint, or one of its consumers pulled, in the last two minutes.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			js, closeFn, err := src.open(cmd.Context(), "rspo-runs")
			if err != nil {
				return err
			}
			defer closeFn()
			runs, err := listRuns(cmd.Context(), js, src.runFilesRoot())
			if err != nil {
				return err
			}
			return writeRuns(cmd.OutOrStdout(), runs)
		},
	}
	src.register(cmd.Flags())
	cmd.AddCommand(newRunsRmCmd())
	return cmd
}

// runInfo is what `rspo runs` shows of one run.
type runInfo struct {
	name  string
	usage streams.RunUsage
	// files is the size of the run's files under the data directory.
	files uint64
	cp    *learnersvc.Checkpoint
	cpErr error
	// live says why the run looks trained right now ("" when it does not).
	live string
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

// state describes the run's progress from its learner checkpoint and
// whether it is being trained.
func (r runInfo) state() string {
	if r.cpErr != nil {
		return "checkpoint unreadable: " + r.cpErr.Error()
	}
	var state string
	switch {
	case r.cp != nil && r.cp.Finished:
		state = "finished"
	case r.live != "" && r.cp != nil:
		state = fmt.Sprintf("running (update %d)", r.cp.Update)
	case r.live != "":
		state = "running (no checkpoint yet)"
	case r.cp != nil:
		state = fmt.Sprintf("interrupted (update %d)", r.cp.Update)
	case r.usage.Messages == 0:
		state = "snapshots only" // e.g. the PRM trained on source runs
	default:
		state = "interrupted (no checkpoint)"
	}
	if r.cp != nil {
		if n := len(r.cp.ShortCycles); n > 0 {
			state += fmt.Sprintf(", %d cycles short of exploration", n)
		}
	}
	return state
}

// listRuns gathers the runs with messages, snapshots or a learner
// checkpoint, sorted by name; with files set, it adds the size of each
// run's directory under it.
func listRuns(ctx context.Context, js jetstream.JetStream, files string) ([]runInfo, error) {
	usage, err := streams.Usage(ctx, js)
	if err != nil {
		return nil, err
	}
	byName := map[string]*runInfo{}
	for run, u := range usage {
		byName[run] = &runInfo{name: run, usage: *u}
	}
	if err := addCheckpoints(ctx, js, byName); err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]runInfo, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		r := byName[name]
		if r.cp != nil {
			r.revisions, r.revErr = pipeline.RunRevisions(ctx, js, name)
		}
		if r.live, err = runLiveness(ctx, js, name, now); err != nil {
			return nil, err
		}
		if files != "" {
			if r.files, err = dirSize(filepath.Join(files, name)); err != nil {
				return nil, err
			}
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
	fmt.Fprintln(w, "RUN\tSTATE\tUPDATES\tPOLICY\tENV STEPS\tMESSAGES\tSIZE\tCODE")
	for _, r := range runs {
		updates, version, steps := "-", "-", "-"
		if r.cp != nil && r.cpErr == nil {
			updates, version = fmt.Sprint(r.cp.Update), fmt.Sprint(r.cp.Version)
			steps = fmt.Sprint(r.cp.EnvStepsActor + r.cp.EnvStepsExplorer)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.name, r.state(), updates, version, steps, r.usage.Messages,
			formatBytes(r.usage.Bytes()+r.files), r.code())
	}
	return w.Flush()
}
