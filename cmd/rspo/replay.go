package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/streams"
)

func init() { addCommand(newReplayCmd) }

// replayFlags are the flags of `rspo replay` besides the connection.
type replayFlags struct {
	run, subject, format string
	fromSeq              uint64
	since                time.Duration
	follow, skipWarmup   bool
}

func newReplayCmd() *cobra.Command {
	var src sourceFlags
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Print a run's stored messages as JSON lines",
		Long: "Read one subject of a run from its stream, decode each message, and print it as one JSON\n" +
			"object per line: stream, seq, time, subject, headers, and the record under \"trajectory\",\n" +
			"\"event\", \"metrics\" or \"rollout\" (dead letters carry their payload and reason instead).\n" +
			"Stops when caught up, or with --follow keeps printing new messages until interrupted.\n" +
			"With --data it reads a run's store directly, with no server to start. A run with no\n" +
			"messages on the server is an error (with --follow the command waits for them instead).\n\n" +
			"Subjects: " + strings.Join(kindNames(streams.ReplaySubjects), ", ") +
			"; ctrl, metrics and dlq may be narrowed, e.g. ctrl.cycle.started, metrics.learner.",
		Example: "  rspo replay --run exp1 --subject traj.onpolicy | jq -c '.trajectory | {task_type, success}'\n" +
			"  rspo replay --run exp1 --subject metrics.learner --since 10m --follow\n" +
			"  rspo replay --data runs --run exp1 --subject ctrl",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.options(time.Now())
			if err != nil {
				return err
			}
			js, closeFn, err := src.open(cmd.Context(), "rspo-replay")
			if err != nil {
				return err
			}
			defer closeFn()
			if !f.follow {
				if err := requireRun(cmd.Context(), js, f.run); err != nil {
					return err
				}
			}
			return replayJSONL(cmd.Context(), js, opts, f.keep(), cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	src.register(fs)
	fs.StringVar(&f.run, "run", "", "run name (required)")
	fs.StringVar(&f.subject, "subject", "", "what to read: "+strings.Join(kindNames(streams.ReplaySubjects), "|")+" (required)")
	fs.Uint64Var(&f.fromSeq, "from-seq", 0, "start at this stream sequence")
	fs.DurationVar(&f.since, "since", 0, "start with messages stored this long ago, e.g. 30m")
	fs.StringVar(&f.format, "format", "jsonl", "output format (jsonl)")
	fs.BoolVar(&f.follow, "follow", false, "keep printing new messages until interrupted")
	fs.BoolVar(&f.skipWarmup, "skip-warmup", false, "leave out the PRM warm-up's rollouts (on traj.onpolicy, header Rspo-Warmup)")
	_ = cmd.MarkFlagRequired("run")
	_ = cmd.MarkFlagRequired("subject")
	return cmd
}

// options checks the flags and turns them into replay options; now anchors
// --since.
func (f replayFlags) options(now time.Time) (streams.ReplayOptions, error) {
	if f.format != "jsonl" {
		return streams.ReplayOptions{}, fmt.Errorf("--format %q: only jsonl is supported", f.format)
	}
	if f.since < 0 {
		return streams.ReplayOptions{}, fmt.Errorf("--since %v: give a positive duration such as 30m", f.since)
	}
	if f.since > 0 && f.fromSeq > 0 {
		return streams.ReplayOptions{}, fmt.Errorf("--from-seq and --since are exclusive; give one")
	}
	if f.skipWarmup && f.subject != string(streams.KindTraj) && f.subject != string(streams.KindTrajOnPolicy) {
		return streams.ReplayOptions{}, fmt.Errorf("--skip-warmup: the warm-up's rollouts are on traj.onpolicy, not %s", f.subject)
	}
	o := streams.ReplayOptions{Run: f.run, Subject: streams.SubjectKind(f.subject), FromSeq: f.fromSeq, Follow: f.follow}
	if f.since > 0 {
		o.Since = now.Add(-f.since)
	}
	return o, o.Validate()
}

// keep returns the filter of the flags: nil keeps every message.
func (f replayFlags) keep() func(streams.Message) bool {
	if !f.skipWarmup {
		return nil
	}
	return func(m streams.Message) bool { return !m.PRMWarmup() }
}

// replayJSONL writes every replayed message that keep keeps (nil: all) as
// one JSON line to out. In follow mode each line is flushed as it comes.
func replayJSONL(ctx context.Context, js jetstream.JetStream, o streams.ReplayOptions, keep func(streams.Message) bool, out io.Writer) error {
	bw := bufio.NewWriter(out)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	err := streams.Replay(ctx, js, o, func(m streams.Message) error {
		if keep != nil && !keep(m) {
			return nil
		}
		if err := enc.Encode(m); err != nil {
			return fmt.Errorf("write seq %d: %w", m.Seq, err)
		}
		if o.Follow {
			return bw.Flush()
		}
		return nil
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}
