package streams

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// Follow hands fn every message of subject in stream, from the stream's
// start and in order, then each new one as it is stored, until ctx ends
// (it then returns nil). It reads through an ordered consumer, which
// holds no state on the server; an error means the subject could not be
// followed.
func Follow(ctx context.Context, js jetstream.JetStream, stream, subject string, fn func(jetstream.Msg)) error {
	cons, err := OrderedConsumer(ctx, js, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subject}, DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return fmt.Errorf("streams: follow %s: %w", subject, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("streams: follow %s: %w", subject, err)
	}
	defer it.Stop()
	defer context.AfterFunc(ctx, it.Stop)()
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("streams: follow %s: %w", subject, err)
		}
		fn(msg)
	}
}
