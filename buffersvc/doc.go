// Package buffersvc is rspo's replay buffer: a Pebble-backed, materialised
// view of the rspo.<run>.swapped stream that the learner samples by priority.
//
// The package has a pure core and a thin service around it:
//
//   - Store keeps outcome-labelled records keyed by run, cycle and
//     trajectory id (a redelivered record overwrites itself), a priority
//     index beside them, per-cycle statistics and a clearing watermark.
//     Store.Sample returns records in the order docs/algorithm.md
//     describes: higher outcome reward first, then more distinct states,
//     then fewer repeated visits, then a seeded random order among exact
//     ties; records of preferred tasks rank before all others.
//   - Service materialises the stream into the Store with a durable pull
//     consumer (acking only after a synced batch commit), clears cycles on
//     cycle.ended, and answers rspo.<run>.buffer.sample and
//     rspo.<run>.buffer.stats as a NATS micro service. Every cycle event
//     is checked against the learner's cycle record
//     (streams.CycleGate): a cycle.ended or cycle.started the learner did
//     not announce is dead-lettered, so no forgery can clear the buffer.
//   - Client is the learner's side of the sample and stats requests. Replies
//     larger than the server's max payload arrive in numbered parts that
//     the client reassembles.
//   - Rebuild replays the streams into a fresh Store: the buffer is a view
//     of the log and can always be recomputed from it. Service.Run does so
//     when the view and the log disagree at start: a store that lost the
//     run while the bus's consumer has acknowledged records, or a store
//     that holds the run while the bus has no consumer of it (the bus's
//     store was wiped). It rebuilds beside the store and swaps the result
//     in only when complete, and reports the records the stream lost
//     (RebuildResult.Gaps).
//
// The service decodes and validates every record of the swapped stream in
// full, although the swapper validated its explorer message already: a
// record published there by anything but the swapper (a forgery, a bug)
// is dead-lettered rather than stored, since the learner decodes every
// record it samples and one that did not decode would fail every sample
// it is drawn into. The index keys come from the decoded record; the
// stored bytes are the message's, verbatim. (schemas.DecodeTrajectory
// reads them without Arrow's reader, so the check costs about ten
// allocations a record.)
//
// A sample reads its records through Pebble's block cache
// (Options.BlockCacheBytes, 256 MiB by default: a cycle of about 13,000
// 32-step records), and copies each record's bytes once, from the cached
// block into the reply; the client decodes each record once.
//
// The records live in Pebble, written through its WAL, although
// RSPO_SWAPPED holds them too. Both alternatives were measured (see
// docs/architecture.md, "The buffer's data plane"): Pebble's WAL is a few
// per cent of the ingest CPU, less than this machine's noise, and dropping
// it would trade that for a rebuild from the stream after every crash;
// serving samples from the stream by sequence instead (one Direct Get per
// record) makes a sample an order of magnitude slower than a read from
// the store (BenchmarkSampleFromStream).
package buffersvc
