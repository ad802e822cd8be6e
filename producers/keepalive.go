package producers

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// keepAlive tells the server every interval that msg is still being worked
// on, so a long cycle or request keeps its claim while a crashed worker's
// claim lapses after one short AckWait and the message goes to another.
// The returned function stops it.
func keepAlive(ctx context.Context, msg jetstream.Msg, interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = msg.InProgress() // a failed heartbeat only risks a redelivery, which is idempotent
			}
		}
	}()
	return cancel
}
