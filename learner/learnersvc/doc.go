// Package learnersvc runs the RSPO loop (docs/algorithm.md) over the bus:
// it owns π_θ, asks actors for on-policy rollouts through the work queue,
// starts each cycle's exploration with cycle.started and its explore shards
// on the work queue (as many as Config.Explore.Shards), samples the replay
// buffer, applies the learner library's updates, and publishes every new
// policy version, metrics and control events. The same loop runs the
// baselines: plain GRPO / PPO / GiGPO (RSPO off) and dense-only training
// on the PRM.
//
// Evaluations run in-process (rollout.Evaluate) or, with Config.EvalShards
// ≥ 2, as work items the actors play (schemas.EvalShard on work.eval,
// answered by schemas.EvalResult on eval.<update>); the learner folds the
// results in episode order into the same report, refusing and
// dead-lettering results that do not answer its shards (evalshards.go).
//
// By default the loop is synchronous: an update's rollouts are asked of
// the version it updates, and actors wait while the learner trains.
// Config.MaxStaleness = S ≥ 1 pipelines it: update u+S's rollouts are asked
// of version u before update u is applied, so update u trains on version
// max(0, u−S)'s rollouts with the decoupled correction
// (learner.Config.Decoupled); a trajectory more than S versions behind is
// refused and counted (metric stale_refused), and every update reports its
// batch's version lag. The RSPO cycle (its start, the explorer's wait)
// stays synchronous; see staleness.go.
//
// Nothing well formed on the bus poisons a run: request and plan ids end
// with nonces derived from a key only the learner reads (nonce.go), every
// on-policy trajectory and buffer record is checked against what was asked
// and what the environment can produce before it is trained on, refused
// ones are dead-lettered and their requests asked again (guard.go), and an
// update that diverges is refused with the last good version kept
// (updateguard.go). One learner trains a run at a time: Run holds the
// run's lease in the state bucket (lease.go).
//
// Everything the service decides is deterministic given its Config and the
// run's streams: request ids, task draws and seeds derive from the update
// counter, so a learner killed at any point and restarted resumes from its
// checkpoint and re-asks for exactly the rollouts it was waiting for — the
// ones already produced are found in the stream, the others are produced
// once.
package learnersvc
