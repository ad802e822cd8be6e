// Package streamstest runs an in-process NATS server with JetStream for
// tests, with the rspo topology in place. Every package whose tests touch
// the bus uses it:
//
//	s := streamstest.RunServer(t)
//	nc, js := streamstest.Connect(t, s)
package streamstest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// RunServer starts a JetStream server on a random loopback port with its
// store in t.TempDir(), and shuts it down when the test ends.
func RunServer(t testing.TB) *server.Server {
	t.Helper()
	e, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatalf("streamstest: start server: %v", err)
	}
	t.Cleanup(e.Shutdown)
	return e.Server()
}

// Connect connects to s, ensures the rspo topology (memory-backed streams
// would hide file-store bugs, so the default file storage is kept), and
// closes the connection when the test ends.
func Connect(t testing.TB, s *server.Server) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, js, err := streams.Connect(ctx, s.ClientURL(), streams.ConnectOptions{Name: t.Name()})
	if err != nil {
		t.Fatalf("streamstest: %v", err)
	}
	t.Cleanup(nc.Close)
	if err := streams.Ensure(ctx, js, streams.Options{}); err != nil {
		t.Fatalf("streamstest: %v", err)
	}
	return nc, js
}

// StartCycles announces cycle.started for cycles 0..through of run, as
// its learner does (streams.AnnounceCycle: recorded in the run's cycle
// record, then published) before the cycles' records and cycle.ended
// events exist: services check cycle events against the record.
func StartCycles(t testing.TB, js jetstream.JetStream, run string, through int64) {
	t.Helper()
	for c := int64(0); c <= through; c++ {
		announce(t, js, schemas.Event{Type: schemas.EventCycleStarted, Run: run, Cycle: c, Time: time.Unix(1700000000, 0).UTC()})
	}
}

// EndCycle announces cycle.ended of cycle c of run, as its learner does.
func EndCycle(t testing.TB, js jetstream.JetStream, run string, c int64) {
	t.Helper()
	announce(t, js, schemas.Event{Type: schemas.EventCycleEnded, Run: run, Cycle: c, Time: time.Unix(1700000000, 0).UTC()})
}

func announce(t testing.TB, js jetstream.JetStream, e schemas.Event) {
	t.Helper()
	if _, err := streams.AnnounceCycle(context.Background(), js, e); err != nil {
		t.Fatal(err)
	}
}
