// Package learnersvc runs the RSPO loop of RSPO.md over the bus: it owns π_θ,
// asks actors for on-policy rollouts through the work queue, starts each
// cycle's exploration with cycle.started and its explore shards on the work
// queue (as many as Config.ExploreShards), samples the replay buffer, applies
// the learner library's updates, and publishes every new policy version,
// metrics and control events. The same loop runs the baselines: plain
// GRPO / PPO / GiGPO (RSPO off) and dense-only training on the PRM.
//
// Everything the service decides is deterministic given its Config and the
// run's streams: request ids, task draws and seeds derive from the update
// counter, so a learner killed at any point and restarted resumes from its
// checkpoint and re-asks for exactly the rollouts it was waiting for — the
// ones already produced are found in the stream, the others are produced
// once.
package learnersvc
