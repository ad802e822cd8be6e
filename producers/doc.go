// Package producers holds the stages that act in environments and publish
// trajectories: actors, which roll out the target policy π_θ for the
// learner's rollout requests, and explorers, which run RSPO's stage 1 —
// copy π_θ, train the copy π_B on dense PRM rewards, and publish its
// rollouts for the swapper.
//
// Both are services: Run(ctx) consumes from JetStream until ctx ends and
// drains. The acting itself is policy.Rollout over an envs.Env; this
// package only wires it to the bus with deterministic ids and seeds, so a
// redelivered request or cycle reproduces exactly the trajectories it did
// before and JetStream's dedupe stores them once.
package producers
