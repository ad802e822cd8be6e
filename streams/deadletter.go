package streams

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DeadLetter stores msg's payload and headers on rspo.<run>.dlq.<component>
// with the reason, original subject, stream, sequence and delivery count in
// Rspo-Dlq-* headers, waits for the DLQ's acknowledgement, then terminates
// msg on its source so it is never redelivered. The dead letter's message
// id is derived from component, stream and sequence, so dead-lettering the
// same message twice (after a crash between the two steps) stores it once.
//
// The run is taken from msg's subject (rspo.<run>...) or, failing that, its
// Rspo-Run header; a message with neither cannot be routed and is an error.
// If the DLQ publish fails, msg is left unacknowledged and the error returned.
// A msg already settled by this client is only recorded, not terminated again.
func DeadLetter(ctx context.Context, js jetstream.JetStream, msg jetstream.Msg, component, reason string) error {
	if err := RecordDeadLetter(ctx, js, msg, component, reason); err != nil {
		return err
	}
	err := msg.TermWithReason(headerValue(reason))
	if err != nil && !errors.Is(err, jetstream.ErrMsgAlreadyAckd) {
		return fmt.Errorf("streams: terminate dead-lettered message on %s: %w", msg.Subject(), err)
	}
	return nil
}

// RecordDeadLetter stores msg on the dead-letter stream as DeadLetter does,
// without settling it on its source: for readers that do not acknowledge
// (ordered consumers, replays), which must still not skip a bad message
// silently.
func RecordDeadLetter(ctx context.Context, js jetstream.JetStream, msg jetstream.Msg, component, reason string) error {
	if err := ValidateComponent(component); err != nil {
		return err
	}
	src := deadLetterSource{subject: msg.Subject(), headers: msg.Headers(), data: msg.Data()}
	if md, err := msg.Metadata(); err == nil {
		src.stream, src.seq, src.delivered = md.Stream, md.Sequence.Stream, md.NumDelivered
	}
	return recordDeadLetter(ctx, js, src, component, reason)
}

// RecordReplayedDeadLetter is RecordDeadLetter for a message Replay
// passed: it stores m's payload and headers with the reason, its subject,
// stream and sequence (a delivery count of 1: a replay does not count).
func RecordReplayedDeadLetter(ctx context.Context, js jetstream.JetStream, m Message, component, reason string) error {
	return recordDeadLetter(ctx, js, deadLetterSource{subject: m.Subject, headers: m.Headers, data: m.Raw,
		stream: m.Stream, seq: m.Seq, delivered: 1}, component, reason)
}

// deadLetterSource is what a dead letter keeps of the message it records.
type deadLetterSource struct {
	subject   string
	headers   nats.Header
	data      []byte
	stream    string // "" when the message's place is unknown
	seq       uint64
	delivered uint64
}

func recordDeadLetter(ctx context.Context, js jetstream.JetStream, src deadLetterSource, component, reason string) error {
	if err := ValidateComponent(component); err != nil {
		return err
	}
	run := RunOf(src.subject)
	if run == "" {
		run = src.headers.Get(HeaderRun)
	}
	if err := ValidateRun(run); err != nil {
		return fmt.Errorf("streams: dead-letter message on %q: no run in subject or header: %w", src.subject, err)
	}
	h := deadLetterHeaders(src, component, reason)
	if _, err := Publish(ctx, js, Subjects(run).DLQ(component), src.data, h); err != nil {
		return fmt.Errorf("streams: dead-letter: %w", err)
	}
	return nil
}

func deadLetterHeaders(src deadLetterSource, component, reason string) nats.Header {
	h := nats.Header{}
	for k, vs := range src.headers {
		if strings.HasPrefix(k, "Nats-") {
			continue // JetStream control headers belong to the original publish
		}
		h[k] = append([]string(nil), vs...)
	}
	if id := src.headers.Get(HeaderMsgID); id != "" {
		h.Set(HeaderDLQMsgID, id)
	}
	h.Set(HeaderDLQReason, headerValue(reason))
	h.Set(HeaderDLQComponent, component)
	h.Set(HeaderDLQSubject, src.subject)
	if src.stream != "" {
		seq := strconv.FormatUint(src.seq, 10)
		h.Set(HeaderDLQStream, src.stream)
		h.Set(HeaderDLQSeq, seq)
		h.Set(HeaderDLQDeliveries, strconv.FormatUint(src.delivered, 10))
		h.Set(HeaderMsgID, component+"/"+src.stream+"/"+seq)
	}
	return h
}

// RecordDeadLetterData stores data, a message component received outside
// any stream it reads (a record of a buffer's sample reply), on
// rspo.<run>.dlq.<component> with the reason and subject, the subject it
// was published on: the run is taken from it. id, when set, is the dead
// letter's message id, so one refused again within the dedupe window is
// stored once.
func RecordDeadLetterData(ctx context.Context, js jetstream.JetStream, subject string, data []byte, component, id, reason string) error {
	if err := ValidateComponent(component); err != nil {
		return err
	}
	run := RunOf(subject)
	if err := ValidateRun(run); err != nil {
		return fmt.Errorf("streams: dead-letter data of %q: no run in the subject: %w", subject, err)
	}
	h := deadLetterHeaders(deadLetterSource{subject: subject, data: data}, component, reason)
	if id != "" {
		h.Set(HeaderMsgID, component+"/"+id)
	}
	if _, err := Publish(ctx, js, Subjects(run).DLQ(component), data, h); err != nil {
		return fmt.Errorf("streams: dead-letter: %w", err)
	}
	return nil
}
