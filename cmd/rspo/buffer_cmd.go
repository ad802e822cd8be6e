package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

func init() { addCommand(newBufferCmd) }

func newBufferCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "buffer",
		Short: "Inspect and rebuild the replay buffer",
	}
	cmd.AddCommand(newBufferRebuildCmd(), newBufferStatsCmd(), newBufferSampleCmd())
	return cmd
}

func newBufferRebuildCmd() *cobra.Command {
	var nf natsFlags
	var run, data string
	var keep int
	cmd := &cobra.Command{
		Use:   "rebuild",
		Short: "Rebuild a buffer's Pebble store from the streams (the buffer is a view of the log)",
		Long: "Replay the run's cycle.ended events and every record on rspo.<run>.swapped into a fresh\n" +
			"store, then put it in place of --data. Stop the buffer service of --data first. A store that\n" +
			"does not open (a truncated or corrupt file) is moved aside to <data>.damaged-<time> and rebuilt.\n" +
			"Records the stream has lost (holes in its sequence numbers among the run's records, or an end\n" +
			"short of what the buffer's consumer read) are reported, and the command then exits non-zero\n" +
			"with the rebuilt store in place.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkBufferFlags(run, keep); err != nil {
				return err
			}
			if _, err := checkReplaceable(data); err != nil {
				return err
			}
			nc, js, err := nf.connect(cmd.Context(), "rspo-buffer-rebuild")
			if err != nil {
				return err
			}
			defer nc.Close()
			return rebuildBuffer(cmd.Context(), js, run, data, keep, cmd.OutOrStdout())
		},
	}
	nf.register(cmd.Flags())
	cmd.Flags().StringVar(&run, "run", "", "run name (required)")
	cmd.Flags().StringVar(&data, "data", "", "directory of the Pebble store to rebuild (required)")
	cmd.Flags().IntVar(&keep, "keep-cycles", 0, "as for rspo serve buffer")
	_ = cmd.MarkFlagRequired("run")
	_ = cmd.MarkFlagRequired("data")
	return cmd
}

func checkBufferFlags(run string, keep int) error {
	if err := streams.ValidateRun(run); err != nil {
		return fmt.Errorf("--run: %w", err)
	}
	if keep < 0 {
		return fmt.Errorf("--keep-cycles %d is negative", keep)
	}
	return nil
}

// rebuildBuffer rebuilds into dir+".rebuild" and swaps it in for dir. It
// refuses a dir that is neither empty nor a store, or whose store is open;
// a store Pebble cannot open (a truncated or corrupt file) is moved aside
// to dir+".damaged-<time>", kept for inspection, and rebuilt. A rebuild
// that finds records missing from the stream puts what remains in place
// and returns an error wrapping buffersvc.ErrGaps.
func rebuildBuffer(ctx context.Context, js jetstream.JetStream, run, dir string, keep int, out io.Writer) error {
	damaged, err := checkReplaceable(dir)
	if err != nil {
		return err
	}
	tmp := filepath.Clean(dir) + ".rebuild"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	store, err := buffersvc.Open(tmp, buffersvc.Options{})
	if err != nil {
		return err
	}
	res, err := buffersvc.Rebuild(ctx, js, store, run, keep)
	if err = errors.Join(err, store.Close()); err != nil {
		return errors.Join(err, os.RemoveAll(tmp))
	}
	if damaged != nil {
		aside := fmt.Sprintf("%s.damaged-%s", filepath.Clean(dir), time.Now().UTC().Format("20060102T150405Z"))
		if err := os.Rename(dir, aside); err != nil {
			return err
		}
		fmt.Fprintf(out, "moved the damaged store %s aside to %s (%v)\n", dir, aside, damaged)
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	fmt.Fprintf(out, "rebuilt %s for run %s: %d messages read, %d records stored, %d replaced, %d dropped (cleared through cycle %d), %d skipped\n",
		dir, run, res.Read, res.Put.Stored, res.Put.Replaced, res.Put.Dropped, res.ClearedThrough, res.Skipped)
	if res.Gaps.Missing() > 0 {
		return fmt.Errorf("%w: %s; the store is rebuilt from what remains", buffersvc.ErrGaps, res.Gaps)
	}
	return nil
}

// checkReplaceable reports whether dir may be replaced: absent, empty, or a
// Pebble store that no process holds open. A store that is not held open
// but does not open either is damaged: it may be replaced, and damaged is
// why it does not open.
func checkReplaceable(dir string) (damaged, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--data: %w", err)
	}
	if len(entries) == 0 {
		return nil, nil
	}
	if _, err := os.Stat(filepath.Join(dir, "CURRENT")); err != nil {
		return nil, fmt.Errorf("--data %s is not empty and holds no buffer store; refusing to replace it", dir)
	}
	lock, err := vfs.Default.Lock(filepath.Join(dir, "LOCK"))
	if err != nil {
		return nil, fmt.Errorf("--data %s: %w (stop the buffer service using it first)", dir, err)
	}
	if err := lock.Close(); err != nil {
		return nil, err
	}
	s, err := buffersvc.Open(dir, buffersvc.Options{})
	if err != nil {
		return err, nil
	}
	return nil, s.Close()
}

func newBufferStatsCmd() *cobra.Command {
	var nf natsFlags
	var run string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Show a running buffer's records per cycle, bytes, success fraction and samples served",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			client, closeFn, err := bufferClient(cmd.Context(), nf, run)
			if err != nil {
				return err
			}
			defer closeFn()
			st, err := client.Stats(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(st)
			}
			return writeBufferStats(cmd.OutOrStdout(), st)
		},
	}
	nf.register(cmd.Flags())
	cmd.Flags().StringVar(&run, "run", "", "run name (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the stats as JSON")
	_ = cmd.MarkFlagRequired("run")
	return cmd
}

// bufferClient connects and returns a client for run's buffer.
func bufferClient(ctx context.Context, nf natsFlags, run string) (*buffersvc.Client, func(), error) {
	if err := streams.ValidateRun(run); err != nil {
		return nil, nil, fmt.Errorf("--run: %w", err)
	}
	nc, _, err := nf.connect(ctx, "rspo-buffer-cli")
	if err != nil {
		return nil, nil, err
	}
	client, err := buffersvc.NewClient(nc, run)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return client, nc.Close, nil
}

func writeBufferStats(out io.Writer, st buffersvc.Stats) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CYCLE\tRECORDS\tBYTES\tSUCCESS\tMEAN REWARD\tSAMPLES SERVED")
	for _, c := range st.Cycles {
		fmt.Fprintf(w, "%d\t%d\t%d\t%.3f\t%.3f\t%d\n", c.Cycle, c.Records, c.Bytes, c.SuccessFraction, c.MeanReward, c.SamplesServed)
	}
	fmt.Fprintf(w, "all\t%d\t%d\t%.3f\t\t%d\n", st.Records, st.Bytes, st.SuccessFraction, st.SamplesServed)
	fmt.Fprintf(w, "cleared through cycle %d; since start: %d stored, %d replaced, %d dropped, %d dead-lettered\n",
		st.ClearedThrough, st.Ingest.Stored, st.Ingest.Replaced, st.Ingest.Dropped, st.Ingest.DeadLettered)
	return w.Flush()
}

func newBufferSampleCmd() *cobra.Command {
	var nf natsFlags
	var run, prefer string
	var req buffersvc.SampleRequest
	cmd := &cobra.Command{
		Use:   "sample",
		Short: "Ask a running buffer for prioritized records, as the learner does, and list them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if prefer != "" {
				req.PreferTasks = strings.Split(prefer, ",")
			}
			if err := req.Validate(); err != nil {
				return fmt.Errorf("--cycle/--count/--prefer: %w", err)
			}
			client, closeFn, err := bufferClient(cmd.Context(), nf, run)
			if err != nil {
				return err
			}
			defer closeFn()
			ts, err := client.Sample(cmd.Context(), req)
			if err != nil {
				return err
			}
			return writeSampled(cmd.OutOrStdout(), ts)
		},
	}
	nf.register(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVar(&run, "run", "", "run name (required)")
	fs.Int64Var(&req.Cycle, "cycle", 0, "cycle to sample")
	fs.IntVar(&req.Count, "count", 16, "records to ask for")
	fs.Int64Var(&req.Seed, "seed", 0, "seed ordering exact ties")
	fs.StringVar(&prefer, "prefer", "", "comma-separated task ids whose records rank first")
	_ = cmd.MarkFlagRequired("run")
	return cmd
}

func writeSampled(out io.Writer, ts []*schemas.Trajectory) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "RANK\tID\tTASK\tREWARD\tDISTINCT\tREPEATS\tSTEPS")
	for i, t := range ts {
		fmt.Fprintf(w, "%d\t%s\t%s\t%g\t%d\t%d\t%d\n", i+1, t.ID, t.TaskID, t.OutcomeReward, t.DistinctStates, t.RepeatedVisits, len(t.Steps))
	}
	return w.Flush()
}
