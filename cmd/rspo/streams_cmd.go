package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/streams"
)

func init() { addCommand(newStreamsCmd) }

func newStreamsCmd() *cobra.Command {
	var src sourceFlags
	var run string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "streams",
		Short: "List the rspo streams, their message counts, consumers and buckets",
		Long: "List every rspo stream with its message count and size, the durable consumers with\n" +
			"their pending counts, and the snapshot and state buckets. With --run, also count the\n" +
			"messages of that run per subject and show only the consumers of that run.\n" +
			"With --data it reads a store directly.",
		Example: "  rspo streams --data runs --run household-gigpo-rspo-prm-tilt-s1\n" +
			"  rspo streams --nats nats://127.0.0.1:4222 --json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if run != "" {
				if err := streams.ValidateRun(run); err != nil {
					return fmt.Errorf("--run: %w", err)
				}
			}
			js, closeFn, err := src.open(cmd.Context(), "rspo-streams")
			if err != nil {
				return err
			}
			defer closeFn()
			if asJSON {
				return writeStreamsJSON(cmd.Context(), js, run, cmd.OutOrStdout())
			}
			return writeStreamsReport(cmd.Context(), js, run, cmd.OutOrStdout())
		},
	}
	src.register(cmd.Flags())
	cmd.Flags().StringVar(&run, "run", "", "count messages per subject for this run")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object (streams, subjects, consumers, buckets) instead of tables")
	return cmd
}

// writeStreamsReport writes the streams, per-subject counts (when run is
// set), consumers and buckets as aligned tables.
func writeStreamsReport(ctx context.Context, js jetstream.JetStream, run string, out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	var found []jetstream.Stream
	missing := 0
	fmt.Fprintln(w, "STREAM\tMESSAGES\tBYTES\tFIRST SEQ\tLAST SEQ\tCONSUMERS")
	for _, spec := range streams.Topology() {
		st, err := js.Stream(ctx, spec.Name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			fmt.Fprintf(w, "%s\tmissing\t-\t-\t-\t-\n", spec.Name)
			missing++
			continue
		}
		if err != nil {
			return fmt.Errorf("stream %s: %w", spec.Name, err)
		}
		s := st.CachedInfo().State
		fmt.Fprintf(w, "%s\t%d\t%s\t%d\t%d\t%d\n", spec.Name, s.Msgs, formatBytes(s.Bytes), s.FirstSeq, s.LastSeq, s.Consumers)
		found = append(found, st)
	}
	if missing > 0 {
		fmt.Fprintln(w, "(missing streams are created by `rspo serve nats` or any rspo service)")
	}
	writeReplicas(w, found)
	if run != "" {
		if err := writeSubjectCounts(ctx, w, found, run); err != nil {
			return err
		}
	}
	if err := writeConsumers(ctx, w, found, run); err != nil {
		return err
	}
	writeBuckets(ctx, w, js)
	return w.Flush()
}

// writeSubjectCounts writes the message count of every subject of run.
func writeSubjectCounts(ctx context.Context, w io.Writer, found []jetstream.Stream, run string) error {
	fmt.Fprintf(w, "\nSUBJECT (run %s)\tMESSAGES\n", run)
	filter := streams.SubjectPrefix + "." + run + ".>"
	total := 0
	for _, st := range found {
		info, err := st.Info(ctx, jetstream.WithSubjectFilter(filter))
		if err != nil {
			return fmt.Errorf("stream %s: %w", st.CachedInfo().Config.Name, err)
		}
		subjects := make([]string, 0, len(info.State.Subjects))
		for s := range info.State.Subjects {
			subjects = append(subjects, s)
		}
		slices.Sort(subjects)
		for _, s := range subjects {
			fmt.Fprintf(w, "%s\t%d\n", s, info.State.Subjects[s])
		}
		total += len(subjects)
	}
	if total == 0 {
		fmt.Fprintf(w, "(no messages for run %s)\t\n", run)
	}
	return nil
}

// writeConsumers writes the durable consumers, only those of run if set.
func writeConsumers(ctx context.Context, w io.Writer, found []jetstream.Stream, run string) error {
	fmt.Fprintln(w, "\nSTREAM\tCONSUMER\tFILTER\tPENDING\tACK PENDING\tREDELIVERED")
	for _, st := range found {
		lister := st.ListConsumers(ctx)
		for ci := range lister.Info() {
			filter := ci.Config.FilterSubject
			if ci.Config.Durable == "" || (run != "" && filter != "" && streams.RunOf(filter) != run) {
				continue
			}
			if filter == "" {
				filter = "(all)"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%d\n", ci.Stream, ci.Name, filter, ci.NumPending, ci.NumAckPending, ci.NumRedelivered)
		}
		if err := lister.Err(); err != nil {
			return fmt.Errorf("consumers of %s: %w", st.CachedInfo().Config.Name, err)
		}
	}
	return nil
}

// writeBuckets writes the snapshot and state buckets; a missing bucket is
// reported, not an error.
func writeBuckets(ctx context.Context, w io.Writer, js jetstream.JetStream) {
	fmt.Fprintln(w, "\nBUCKET\tKIND\tBYTES")
	for _, b := range []string{streams.BucketPolicy, streams.BucketPRM} {
		obs, err := js.ObjectStore(ctx, b)
		if err != nil {
			fmt.Fprintf(w, "%s\tobject store\tmissing\n", b)
			continue
		}
		st, err := obs.Status(ctx)
		if err != nil {
			fmt.Fprintf(w, "%s\tobject store\t%v\n", b, err)
			continue
		}
		fmt.Fprintf(w, "%s\tobject store\t%s\n", b, formatBytes(st.Size()))
	}
	kv, err := js.KeyValue(ctx, streams.BucketState)
	if err != nil {
		fmt.Fprintf(w, "%s\tkey-value\tmissing\n", streams.BucketState)
		return
	}
	if st, err := kv.Status(ctx); err == nil {
		fmt.Fprintf(w, "%s\tkey-value (%d values)\t%s\n", streams.BucketState, st.Values(), formatBytes(st.Bytes()))
	}
}

// formatBytes renders n with a binary unit: 0 B, 1.5 KiB, 3.2 MiB.
func formatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
