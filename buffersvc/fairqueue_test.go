package buffersvc

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// A client with many requests waiting gets one turn per round; the order
// within a client is its arrival order.
func TestFairQueueServesClientsInTurn(t *testing.T) {
	q := newFairQueue[string]()
	for i := range 4 {
		q.push("big", fmt.Sprint("big", i))
	}
	q.push("small", "small0")
	q.push("small", "small1")
	var got []string
	for range 6 {
		item, ok := q.pop(context.Background())
		if !ok {
			t.Fatal("queue empty too early")
		}
		got = append(got, item)
	}
	want := []string{"big0", "small0", "big1", "small1", "big2", "big3"}
	if !slices.Equal(got, want) {
		t.Errorf("served %v, want %v", got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := q.pop(ctx); ok {
		t.Error("pop of an empty queue returned an item")
	}
}

// The queue's memory is bounded: per client and in clients.
func TestFairQueueRefusesBeyondItsBounds(t *testing.T) {
	q := newFairQueue[int]()
	for i := range maxQueuedPerClient {
		if !q.push("a", i) {
			t.Fatalf("request %d refused", i)
		}
	}
	if q.push("a", 0) {
		t.Error("a request beyond the per-client bound was queued")
	}
	for i := 1; i < maxQueuedClients; i++ {
		if !q.push(fmt.Sprint("c", i), i) {
			t.Fatalf("client %d refused", i)
		}
	}
	if q.push("one-too-many", 0) {
		t.Error("a client beyond the bound was queued")
	}
}

func TestClientOf(t *testing.T) {
	if a, b := clientOf("_INBOX.abc.1"), clientOf("_INBOX.abc.2"); a != b || a != "_INBOX.abc" {
		t.Errorf("clientOf: %q, %q", a, b)
	}
}
