package streams

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rspo-dev/rspo/schemas"
)

// SubjectKind is a kind of a run's subjects, relative to rspo.<run>: what
// Replay reads. ctrl, metrics, dlq and eval may be narrowed with further tokens
// (CtrlKind, MetricsKind, "dlq.swapper"); KindTraj reads both trajectory
// sources.
type SubjectKind string

// The subject kinds of a run.
const (
	KindTrajExplore  SubjectKind = "traj.explore"
	KindTrajOnPolicy SubjectKind = "traj.onpolicy"
	KindTraj         SubjectKind = "traj"
	KindSwapped      SubjectKind = "swapped"
	KindCtrl         SubjectKind = "ctrl"
	KindMetrics      SubjectKind = "metrics"
	KindDLQ          SubjectKind = "dlq"
	// KindBatch is the learner's training batches (schemas.TrainBatch).
	KindBatch SubjectKind = "batch"
	// KindEval is the actors' evaluation results (schemas.EvalResult), of
	// every update; EvalKind narrows it to one update's.
	KindEval SubjectKind = "eval"
)

// EvalKind is the kind of the evaluation results of learner update
// update, e.g. "eval.30".
func EvalKind(update int64) SubjectKind {
	return KindEval + "." + SubjectKind(strconv.FormatInt(update, 10))
}

// CtrlKind is the kind of one control event type's subject, e.g.
// "ctrl.cycle.started".
func CtrlKind(t schemas.EventType) SubjectKind { return KindCtrl + "." + SubjectKind(t) }

// TrajKind is the kind of one trajectory source's subject.
func TrajKind(src schemas.Source) SubjectKind { return KindTraj + "." + SubjectKind(src) }

// ReplaySubjects are the subject kinds Replay reads.
var ReplaySubjects = []SubjectKind{KindTrajExplore, KindTrajOnPolicy, KindTraj, KindSwapped, KindCtrl, KindMetrics, KindDLQ, KindBatch, KindEval}

// ReplayOptions selects what Replay reads.
type ReplayOptions struct {
	// Run is the run to read. Required.
	Run string
	// Subject is one of ReplaySubjects, possibly narrowed. Required.
	Subject SubjectKind
	// FromSeq starts at this stream sequence (inclusive). Default: the start.
	FromSeq uint64
	// Since starts at the first message stored at or after this time.
	// Exclusive with FromSeq.
	Since time.Time
	// Follow keeps reading new messages after catching up, until ctx ends.
	Follow bool
}

// Validate reports every problem with the options, joined.
func (o ReplayOptions) Validate() error {
	var errs []error
	if err := ValidateRun(o.Run); err != nil {
		errs = append(errs, err)
	}
	if _, _, err := o.filter(); err != nil {
		errs = append(errs, err)
	}
	if o.FromSeq > 0 && !o.Since.IsZero() {
		errs = append(errs, fmt.Errorf("%w: a start sequence and a start time are exclusive", ErrInvalidConfig))
	}
	return errors.Join(errs...)
}

// filter returns the stream and subject filter of o.Subject.
func (o ReplayOptions) filter() (stream, filter string, err error) {
	rel := string(o.Subject)
	tokens := strings.Split(rel, ".")
	kind, narrow := tokens[0], tokens[1:]
	unknown := func(why string) error {
		return fmt.Errorf("%w: %q: %s; want one of %s", ErrUnknownSubject, rel, why, joinKinds(ReplaySubjects))
	}
	switch kind {
	case "traj":
		if len(narrow) > 1 || len(narrow) == 1 && narrow[0] != "explore" && narrow[0] != "onpolicy" {
			return "", "", unknown("trajectories are traj.explore or traj.onpolicy")
		}
	case "swapped", "batch":
		if len(narrow) > 0 {
			return "", "", unknown(kind + " takes no further token")
		}
	case "ctrl", "metrics", "dlq", "eval":
		for _, tok := range narrow {
			if validateToken("subject", tok) != nil {
				return "", "", unknown(fmt.Sprintf("%q is not a plain subject token", tok))
			}
		}
	default:
		return "", "", unknown("not a replayable kind")
	}
	filter = SubjectPrefix + "." + o.Run + "." + rel
	if len(narrow) == 0 && kind != "swapped" && kind != "batch" {
		filter += ".>"
	}
	return StreamFor(filter), filter, nil
}

func joinKinds(kinds []SubjectKind) string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// Replay reads a run's messages on o.Subject in stream order with an
// ordered consumer and passes each, decoded, to fn. It returns nil once it
// has delivered every message stored when it started (at once if there are
// none) or, with Follow, when ctx ends. It returns fn's error unchanged if
// fn fails, ctx's error if ctx ends before catching up, and
// ErrInvalidConfig, ErrInvalidName or ErrUnknownSubject for bad options.
// A message that does not decode is passed with Err set, not skipped.
func Replay(ctx context.Context, js jetstream.JetStream, o ReplayOptions, fn func(Message) error) error {
	if err := o.Validate(); err != nil {
		return err
	}
	stream, filter, _ := o.filter()
	last, err := o.lastSeq(ctx, js, stream, filter)
	if err != nil || !o.Follow && last == 0 {
		return err
	}
	cons, err := OrderedConsumer(ctx, js, stream, o.consumerConfig(filter))
	if err != nil {
		return fmt.Errorf("streams: replay %s: %w", filter, err)
	}
	defer deleteOrdered(js, stream, cons)
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("streams: replay %s: %w", filter, err)
	}
	defer it.Stop()
	defer context.AfterFunc(ctx, it.Stop)()
	for {
		msg, err := it.Next()
		if err != nil {
			return o.endError(ctx, filter, err)
		}
		m := DecodeMessage(msg)
		if err := fn(m); err != nil {
			return err
		}
		if md, err := msg.Metadata(); err == nil && md.Sequence.Stream >= last && !o.Follow {
			return nil
		}
	}
}

// lastSeq is the stream sequence of the last message Replay must deliver
// without Follow, 0 if there is none. The stream's leader answers, so a
// replay whose consumer the cluster placed on a replica still catching up
// (after a node restart) waits for that replica instead of ending early
// with what it holds so far.
// LastSeq returns the stream sequence of the last message Replay with o
// (Follow aside) would deliver, or 0 when it would deliver none, without
// reading the messages: a cheap mark of how far a run's subject has got.
// Errors: o's Validate, or the server's.
func LastSeq(ctx context.Context, js jetstream.JetStream, o ReplayOptions) (uint64, error) {
	if err := o.Validate(); err != nil {
		return 0, err
	}
	o.Follow = false
	stream, filter, _ := o.filter()
	return o.lastSeq(ctx, js, stream, filter)
}

func (o ReplayOptions) lastSeq(ctx context.Context, js jetstream.JetStream, stream, filter string) (uint64, error) {
	if o.Follow {
		return 0, nil
	}
	m, err := callAPI(ctx, func(ctx context.Context) (*jetstream.RawStreamMsg, error) {
		st, err := js.Stream(ctx, stream)
		if err != nil {
			return nil, err
		}
		return st.GetLastMsgForSubject(ctx, filter)
	})
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("streams: replay %s: %w", filter, err)
	case m.Sequence < o.FromSeq, !o.Since.IsZero() && m.Time.Before(o.Since):
		return 0, nil
	}
	return m.Sequence, nil
}

func (o ReplayOptions) consumerConfig(filter string) jetstream.OrderedConsumerConfig {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}, DeliverPolicy: jetstream.DeliverAllPolicy,
		InactiveThreshold: replayInactiveThreshold}
	switch {
	case o.FromSeq > 0:
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, o.FromSeq
	case !o.Since.IsZero():
		since := o.Since
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &since
	}
	return cfg
}

// endError turns the iterator's terminal error into Replay's result.
func (o ReplayOptions) endError(ctx context.Context, filter string, err error) error {
	if ctx.Err() != nil {
		if o.Follow {
			return nil
		}
		return ctx.Err()
	}
	return fmt.Errorf("streams: replay %s: %w", filter, err)
}

// replayInactiveThreshold is how long the server keeps a replay's consumer
// after its reader went away without deleting it (a crash): replays are
// frequent (services poll the streams), so abandoned consumers must not pile up.
const replayInactiveThreshold = 30 * time.Second

// deleteOrdered removes a finished replay's consumer at once rather than
// leaving it to the inactivity threshold.
func deleteOrdered(js jetstream.JetStream, stream string, cons jetstream.Consumer) {
	info := cons.CachedInfo()
	if info == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = js.DeleteConsumer(ctx, stream, info.Name) // best effort: the threshold cleans up otherwise
}
