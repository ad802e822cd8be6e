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
	run := RunOf(msg.Subject())
	if run == "" {
		run = msg.Headers().Get(HeaderRun)
	}
	if err := ValidateRun(run); err != nil {
		return fmt.Errorf("streams: dead-letter message on %q: no run in subject or header: %w", msg.Subject(), err)
	}
	h := deadLetterHeaders(msg, component, reason)
	if _, err := Publish(ctx, js, Subjects(run).DLQ(component), msg.Data(), h); err != nil {
		return fmt.Errorf("streams: dead-letter: %w", err)
	}
	return nil
}

func deadLetterHeaders(msg jetstream.Msg, component, reason string) nats.Header {
	h := nats.Header{}
	for k, vs := range msg.Headers() {
		if strings.HasPrefix(k, "Nats-") {
			continue // JetStream control headers belong to the original publish
		}
		h[k] = append([]string(nil), vs...)
	}
	if id := msg.Headers().Get(HeaderMsgID); id != "" {
		h.Set(HeaderDLQMsgID, id)
	}
	h.Set(HeaderDLQReason, headerValue(reason))
	h.Set(HeaderDLQComponent, component)
	h.Set(HeaderDLQSubject, msg.Subject())
	if md, err := msg.Metadata(); err == nil {
		seq := strconv.FormatUint(md.Sequence.Stream, 10)
		h.Set(HeaderDLQStream, md.Stream)
		h.Set(HeaderDLQSeq, seq)
		h.Set(HeaderDLQDeliveries, strconv.FormatUint(md.NumDelivered, 10))
		h.Set(HeaderMsgID, component+"/"+md.Stream+"/"+seq)
	}
	return h
}
