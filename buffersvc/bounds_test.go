package buffersvc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/streams"
)

// prefer_tasks with 400k ids used to grow the buffer from 49 MB to 4.3 GB
// of memory and take seconds. Every field of a sample request is bounded,
// and a request beyond a bound gets a 400 reply, at once.
func TestSampleRequestsBeyondTheBoundsGet400(t *testing.T) {
	b := newBus(t, 8<<20)
	b.startBuffer(t, buffersvc.Config{})
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("household/train/%d", i)
		}
		return out
	}
	tests := []struct {
		name string
		req  buffersvc.SampleRequest
	}{
		{"too many preferred tasks", buffersvc.SampleRequest{Cycle: 0, Count: 4, PreferTasks: ids(buffersvc.MaxPreferTasks + 1)}},
		{"300k preferred tasks (6 MB)", buffersvc.SampleRequest{Cycle: 0, Count: 4, PreferTasks: ids(300_000)}},
		{"count too large", buffersvc.SampleRequest{Cycle: 0, Count: buffersvc.MaxSampleCount + 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := json.Marshal(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			reply, err := b.nc.Request(streams.Subjects("r").BufferSample, data, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if code := reply.Header.Get(micro.ErrorCodeHeader); code != "400" {
				t.Errorf("reply code %q (%s), want 400", code, reply.Header.Get(micro.ErrorHeader))
			}
		})
	}
}

// A learner's call made while the buffer is down (killed, restarting) used
// to fail at once with "no buffer service for run", and the learner exited.
// The client retries until a buffer answers.
func TestClientRidesOutABufferRestart(t *testing.T) {
	b := newBus(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc, err := buffersvc.NewService(b.nc, b.js, b.store, buffersvc.Config{Run: "r", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		time.Sleep(500 * time.Millisecond) // the buffer comes back while the call waits
		done <- svc.Run(ctx)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("buffer: %v", err)
		}
	}()
	st, err := b.client.Stats(ctx)
	if err != nil {
		t.Fatalf("Stats across a buffer restart: %v", err)
	}
	if st.Run != "r" {
		t.Errorf("stats of run %q, want r", st.Run)
	}
}

// FuzzSampleRequest decodes arbitrary sample requests as the service does:
// an accepted request is within every bound.
func FuzzSampleRequest(f *testing.F) {
	for _, seed := range []string{`{"cycle":1,"count":16,"prefer_tasks":["a","b"],"seed":3}`, `{"count":0}`, `{"cycle":-1,"count":1}`,
		`{"count":5000}`, `{"count":1,"prefer_tasks":null}`, `[]`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r buffersvc.SampleRequest
		if json.Unmarshal(b, &r) != nil || r.Validate() != nil {
			return
		}
		if r.Cycle < 0 || r.Count < 1 || r.Count > buffersvc.MaxSampleCount || len(r.PreferTasks) > buffersvc.MaxPreferTasks {
			t.Fatalf("accepted an out-of-bounds request %+v", r)
		}
	})
}

// FuzzDecodeStats decodes arbitrary stats replies: an accepted one has no
// negative count, and survives a round trip.
func FuzzDecodeStats(f *testing.F) {
	for _, seed := range []string{`{"run":"r","records":3,"cycles":[{"cycle":1,"records":3,"successes":1,"success_fraction":0.33}]}`,
		`{"records":-1}`, `{"success_fraction":2}`, `{}`, `x`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := buffersvc.DecodeStats(b)
		if err != nil {
			if !errors.Is(err, buffersvc.ErrBadReply) {
				t.Fatalf("error %v does not wrap ErrBadReply", err)
			}
			return
		}
		if st.Records < 0 || st.Bytes < 0 {
			t.Fatalf("accepted %+v", st)
		}
		raw, _ := json.Marshal(st)
		if _, err := buffersvc.DecodeStats(raw); err != nil {
			t.Fatalf("round trip refused: %v", err)
		}
	})
}

// A buffer that died mid-request used to hold the learner until its own
// context's deadline (up to ten minutes): the client's timeout was skipped
// whenever the caller's context had one. Each attempt now has its own.
func TestClientGivesUpOnABufferThatNeverAnswers(t *testing.T) {
	b := newBus(t, 0)
	sub, err := b.nc.Subscribe(streams.Subjects("r").BufferSample, func(*nats.Msg) {}) // takes requests, never replies
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	_, err = b.client.WithTimeouts(200*time.Millisecond, time.Second).Sample(ctx, buffersvc.SampleRequest{Count: 1})
	if !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		t.Fatalf("got %v (caller's context: %v), want the attempts' own deadline to end the call", err, ctx.Err())
	}
}
