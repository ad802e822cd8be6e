package buffersvc_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/swapper"
	"github.com/rspo-dev/rspo/swapper/swappertest"
)

// Sizes of BenchmarkSampleFairness: the hog's concurrent requests and the
// records each asks for (fewer under -short).
const (
	hogRequests, hogCount           = 64, 4096
	shortHogRequests, shortHogCount = 8, 1024
)

// BenchmarkSampleFairness measures the latency of one client's 16-record
// samples while another client (its own connection) keeps 64 requests of
// 4,096 records each (4-step records) in flight at the buffer.
func BenchmarkSampleFairness(b *testing.B) {
	requests, count := hogRequests, hogCount
	if testing.Short() {
		requests, count = shortHogRequests, shortHogCount
	}
	bs := newBus(b, 0)
	fillStore(b, bs.store, count+count/4)
	ownConsumer(b, bs.js)
	svc, err := buffersvc.NewService(bs.nc, bs.js, bs.store, buffersvc.Config{Run: "r", Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	run(b, "buffer", svc.Run)
	waitServing(b, bs.client)

	hogConn, err := nats.Connect(bs.nc.ConnectedUrl())
	if err != nil {
		b.Fatal(err)
	}
	defer hogConn.Close()
	hog, err := buffersvc.NewClient(hogConn, "r")
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var served sync.WaitGroup
	served.Add(requests)
	for range requests {
		wg.Go(func() {
			first := true
			for ctx.Err() == nil {
				_, err := hog.Sample(ctx, buffersvc.SampleRequest{Cycle: 1, Count: count})
				if err != nil && ctx.Err() == nil {
					b.Error(err)
					return
				}
				if first {
					served.Done()
					first = false
				}
			}
		})
	}
	served.Wait() // every hog request has been served once: the queue is full of them
	latencies(b, func(i int) error {
		ts, err := bs.client.Sample(context.Background(), buffersvc.SampleRequest{Cycle: 1, Count: 16, Seed: int64(i)})
		if err == nil && len(ts) != 16 {
			err = fmt.Errorf("got %d records, want 16", len(ts))
		}
		return err
	})
	stop()
	wg.Wait()
}

// fillStore writes n swapped 4-step records of run "r" in cycle 1 into
// store directly.
func fillStore(b *testing.B, store *buffersvc.Store, n int) {
	b.Helper()
	var entries []buffersvc.Entry
	for i := range n {
		r, err := swapper.Relabel(swappertest.Explorer("r", 1, i, 4))
		if err != nil {
			b.Fatal(err)
		}
		e, err := buffersvc.EntryOf(r, swappertest.Encode(r))
		if err != nil {
			b.Fatal(err)
		}
		entries = append(entries, e)
	}
	if _, err := store.Put(entries); err != nil {
		b.Fatal(err)
	}
}
