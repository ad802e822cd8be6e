package buffersvc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/streams"
)

// Gaps is what a rebuild found missing from RSPO_SWAPPED. JetStream gives
// every message a sequence number, and a store that loses messages (a
// truncated or corrupt block after a crash, a disk replaced) keeps the
// numbers of those it lost as holes, or ends earlier than its consumers
// have read: both are visible, while the lost records themselves are
// not. A replay that does not look for them rebuilds a buffer short of
// records and calls it complete.
type Gaps struct {
	// Inside counts the sequences the stream no longer holds between the
	// run's first and last record it does hold. Another run's messages
	// deleted from the stream (rspo runs rm) count too: the stream cannot
	// tell whose they were.
	Inside uint64 `json:"inside"`
	// Tail counts the sequences missing after the run's last record the
	// stream holds, up to the last one a durable consumer of the run's
	// records (the live buffer's) was delivered, even beyond the stream's
	// end: the stream lost its end.
	Tail uint64 `json:"tail"`
	// Ranges lists the first missing ranges (at most maxGapRanges).
	Ranges []SeqRange `json:"ranges,omitempty"`
}

// SeqRange is an inclusive range of stream sequences.
type SeqRange struct {
	First uint64 `json:"first"`
	Last  uint64 `json:"last"`
}

// maxGapRanges bounds Gaps.Ranges: a report, not an inventory.
const maxGapRanges = 8

// Missing is every sequence counted missing.
func (g Gaps) Missing() uint64 { return g.Inside + g.Tail }

// String describes the gaps for a log or an error.
func (g Gaps) String() string {
	var rs []string
	for _, r := range g.Ranges {
		rs = append(rs, fmt.Sprintf("%d-%d", r.First, r.Last))
	}
	return fmt.Sprintf("%d sequences missing within the run's records, %d after its last (ranges %s)",
		g.Inside, g.Tail, strings.Join(rs, ","))
}

// ErrGaps means a rebuild found records missing from the stream.
var ErrGaps = errors.New("buffersvc: the swapped stream lost records")

// gapFinder collects what Gaps needs while a replay reads the run's
// records: the stream's holes and end when it starts, the delivered
// sequences of the run's durable consumers, and the first and last
// sequence the replay saw.
type gapFinder struct {
	deleted     []uint64 // sorted
	last        uint64
	delivered   uint64
	first, high uint64
}

// newGapFinder reads RSPO_SWAPPED's state and the run's consumers.
func newGapFinder(ctx context.Context, js jetstream.JetStream, run string) (*gapFinder, error) {
	st, err := js.Stream(ctx, streams.StreamSwapped)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", streams.StreamSwapped, err)
	}
	info, err := st.Info(ctx, jetstream.WithDeletedDetails(true))
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", streams.StreamSwapped, err)
	}
	g := &gapFinder{deleted: slices.Sorted(slices.Values(info.State.Deleted)), last: info.State.LastSeq}
	subject := streams.Subjects(run).Swapped
	consumers := st.ListConsumers(ctx)
	for c := range consumers.Info() {
		if c.Config.Durable != "" && c.Config.FilterSubject == subject {
			g.delivered = max(g.delivered, c.Delivered.Stream)
		}
	}
	if err := consumers.Err(); err != nil {
		return nil, fmt.Errorf("consumers of %s: %w", streams.StreamSwapped, err)
	}
	return g, nil
}

// saw notes a replayed record's sequence.
func (g *gapFinder) saw(seq uint64) {
	if g.first == 0 || seq < g.first {
		g.first = seq
	}
	g.high = max(g.high, seq)
}

// result counts the holes between the first and last record seen, the
// holes after the last record seen up to the last one a consumer was
// delivered, and the consumers' reach past the stream's end.
func (g *gapFinder) result() Gaps {
	var out Gaps
	for _, seq := range g.deleted {
		switch {
		case seq > g.first && seq < g.high:
			out.Inside++
		case seq > g.high && seq <= g.delivered:
			out.Tail++
		default:
			continue
		}
		out.addRange(seq, seq)
	}
	if g.delivered > g.last {
		out.Tail += g.delivered - g.last
		out.addRange(g.last+1, g.delivered)
	}
	return out
}

// addRange extends the last range with [first, last] when adjacent, or
// starts a new one while fewer than maxGapRanges are listed.
func (g *Gaps) addRange(first, last uint64) {
	if n := len(g.Ranges); n > 0 && g.Ranges[n-1].Last+1 == first {
		g.Ranges[n-1].Last = last
		return
	}
	if len(g.Ranges) < maxGapRanges {
		g.Ranges = append(g.Ranges, SeqRange{first, last})
	}
}
