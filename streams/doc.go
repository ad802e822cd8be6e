// Package streams is rspo's view of NATS JetStream: the topology (streams,
// subjects, object-store and key-value buckets), connecting to a server or
// starting an embedded one, publishing the data contracts of package schemas
// with the protocol headers, consuming with explicit acks and a dead-letter
// queue, and replaying a run's history.
//
// The protocol is documented in docs/architecture.md; the names here are its
// single source of truth. Every subject is scoped by a run name:
//
//	rspo.<run>.traj.onpolicy      RSPO_TRAJ     one trajectory, Arrow IPC
//	rspo.<run>.traj.explore       RSPO_TRAJ     one trajectory, Arrow IPC
//	rspo.<run>.swapped            RSPO_SWAPPED  one relabelled trajectory, Arrow IPC
//	rspo.<run>.work.rollout       RSPO_WORK     rollout request, JSON (work queue)
//	rspo.<run>.work.explore       RSPO_WORK     explore shard, JSON (work queue)
//	rspo.<run>.work.eval          RSPO_WORK     evaluation shard, JSON (work queue)
//	rspo.<run>.eval.<update>      RSPO_EVAL     evaluation shard's result, JSON
//	rspo.<run>.ctrl.<event>       RSPO_CTRL     control event, JSON
//	rspo.<run>.metrics.<comp>     RSPO_METRICS  metrics event, JSON
//	rspo.<run>.dlq.<comp>         RSPO_DLQ      rejected message, reason in headers
//
// A service connects with [Connect] (or starts an in-process server with
// [StartEmbedded]), calls [Ensure] once at start (it is idempotent and keeps
// an operator's limits), publishes with [PublishTrajectory] and friends,
// and consumes with [Consume] or [ConsumeBatch], whose handler returns nil
// to ack, [Reject] to dead-letter, or any other error to retry a bounded
// number of times before dead-lettering. Analysis tools read a run with
// [Replay] and need no change to the pipeline. Tests get a server with the
// topology from package streamstest.
package streams
