package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/streams"
)

// ErrRunLive means `rspo runs rm` refused a run that is being trained.
var ErrRunLive = errors.New("the run is being trained")

func newRunsRmCmd() *cobra.Command {
	var src sourceFlags
	cmd := &cobra.Command{
		Use:   "rm NAME",
		Short: "Delete a run: its messages, snapshots, state and files",
		Long: "Delete everything of run NAME: its messages in every stream, the consumers that read only its\n" +
			"subjects, its policy and PRM snapshots, its keys in the state bucket and, with --data, its\n" +
			"directory under the data directory (buffer store, report). Other runs are untouched. A run that\n" +
			"is being trained (its learner holds its lease, or wrote a checkpoint, or one of its consumers\n" +
			"pulled, in the last two minutes) is refused: stop it first.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			run := args[0]
			if err := streams.ValidateRun(run); err != nil {
				return fmt.Errorf("run name: %w", err)
			}
			js, closeFn, err := src.open(cmd.Context(), "rspo-runs-rm")
			if err != nil {
				return err
			}
			defer closeFn()
			return removeRun(cmd.Context(), js, run, src.runFilesRoot(), cmd.OutOrStdout())
		},
	}
	src.register(cmd.Flags())
	return cmd
}

// removeRun deletes run from the server and, when files is set, its
// directory under files; it refuses a run that does not exist or is live.
func removeRun(ctx context.Context, js jetstream.JetStream, run, files string, out io.Writer) error {
	runs, err := listRuns(ctx, js, files)
	if err != nil {
		return err
	}
	var info *runInfo
	for i := range runs {
		if runs[i].name == run {
			info = &runs[i]
		}
	}
	dir := ""
	if files != "" {
		dir = filepath.Join(files, run)
	}
	if info == nil && !exists(dir) {
		return fmt.Errorf("run %s does not exist", run)
	}
	if info != nil && info.live != "" {
		return fmt.Errorf("%w: %s: %s (stop it first)", ErrRunLive, run, info.live)
	}
	rm, err := streams.RemoveRun(ctx, js, run)
	if err != nil {
		return err
	}
	var freed uint64
	if exists(dir) {
		if freed, err = dirSize(dir); err != nil {
			return err
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("remove %s: %w", dir, err)
		}
	}
	fmt.Fprintf(out, "removed run %s: %d messages, %d consumers, %d snapshots, %d state keys", run,
		rm.Messages, rm.Consumers, rm.Objects, rm.Keys)
	if dir != "" {
		fmt.Fprintf(out, ", %s of files in %s", formatBytes(freed), dir)
	}
	fmt.Fprintln(out)
	return nil
}

// exists reports whether path names an existing file or directory.
func exists(path string) bool {
	if path == "" {
		return false
	}
	_, err := os.Stat(path)
	return err == nil
}
