package main

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/streams"
)

// testBus starts an embedded JetStream server for a test that runs stages
// as processes, connects to it as client, creates rspo's streams, and
// returns the server, the connection's JetStream and a context bounded by
// timeout. Everything is closed when the test ends.
func testBus(t *testing.T, client string, timeout time.Duration) (*streams.Embedded, jetstream.JetStream, context.Context) {
	t.Helper()
	e, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	nc, js, err := e.Connect(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	if err := streams.Ensure(ctx, js, streams.Options{}); err != nil {
		t.Fatal(err)
	}
	return e, js, ctx
}
