package buffersvc

import (
	"context"
	"strings"
	"sync"
)

// Bounds of the sample queue: a client with maxQueuedPerClient requests
// waiting, or a request from a new client while maxQueuedClients have
// requests waiting, is refused at once (ErrBusy) rather than held in
// memory.
const (
	maxQueuedPerClient = 256
	maxQueuedClients   = 1024
)

// fairQueue holds the sample requests waiting to be served, per client,
// and hands them out round-robin over the clients: a client that asks
// for many huge samples at once gets one turn in each round, not the
// whole queue. Served in arrival order, 64 concurrent 4,096-record
// requests of one client held another client's 16-record requests for
// seconds (BenchmarkSampleFairness).
type fairQueue[T any] struct {
	mu      sync.Mutex
	waiting map[string][]T
	order   []string // clients with requests waiting, in turn order
	ready   chan struct{}
}

func newFairQueue[T any]() *fairQueue[T] {
	return &fairQueue[T]{waiting: map[string][]T{}, ready: make(chan struct{}, 1)}
}

// push queues item for client; false when the bounds refuse it.
func (q *fairQueue[T]) push(client string, item T) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	pending, known := q.waiting[client]
	switch {
	case len(pending) >= maxQueuedPerClient, !known && len(q.order) >= maxQueuedClients:
		return false
	case !known:
		q.order = append(q.order, client)
	}
	q.waiting[client] = append(pending, item)
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true
}

// pop returns the next client's oldest request, waiting for one until
// ctx ends (ok = false).
func (q *fairQueue[T]) pop(ctx context.Context) (item T, ok bool) {
	for {
		if item, ok := q.next(); ok {
			return item, true
		}
		select {
		case <-q.ready:
		case <-ctx.Done():
			return item, false
		}
	}
}

// next takes the oldest request of the client whose turn it is and moves
// that client to the end of the turn order.
func (q *fairQueue[T]) next() (item T, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.order) == 0 {
		return item, false
	}
	client := q.order[0]
	q.order = q.order[1:]
	pending := q.waiting[client]
	item, pending[0] = pending[0], *new(T) // drop the reference
	if pending = pending[1:]; len(pending) > 0 {
		q.waiting[client] = pending
		q.order = append(q.order, client)
	} else {
		delete(q.waiting, client)
	}
	return item, true
}

// clientOf names a request's client by its reply subject without the
// last token: a connection's requests share their inbox prefix
// (_INBOX.<connection>.<request>).
func clientOf(reply string) string {
	if i := strings.LastIndexByte(reply, '.'); i > 0 {
		return reply[:i]
	}
	return reply
}
