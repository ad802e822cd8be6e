package prmsvc

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmtest"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// BenchmarkServiceScore measures scoring through the micro service from a
// separate connection: 16 trajectories of 30 steps per request.
func BenchmarkServiceScore(b *testing.B) {
	s := streamstest.RunServer(b)
	serverConn, js := streamstest.Connect(b, s)
	svc, err := New(serverConn, js, Config{Run: "bench", Model: prm.Random(1), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := svc.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer svc.Stop()
	clientConn, _ := streamstest.Connect(b, s)
	client, _ := NewClient(clientConn, "bench")
	trajs, _ := prmtest.Decisive("bench", 1, 16, 30)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := client.Score(ctx, trajs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*16*30)/b.Elapsed().Seconds(), "steps/s")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/request")
}
