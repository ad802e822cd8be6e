// Package producers holds the stages that act in environments and publish
// trajectories: actors, which roll out the target policy π_θ for the
// learner's rollout requests, and explorers, which run RSPO's stage 1 —
// copy π_θ, train the copy π_B on dense PRM rewards, and publish its
// rollouts for the swapper.
//
// Besides the paper's trained explorer (and the frozen and random-PRM
// controls), an explorer can steer instead of train (ExplorerConfig.Tilt):
// π_B(a|s) ∝ π_θ(a|s)·exp(λ·r̂(s,a)), the per-step closed-form maximiser of
// E[r̂] − KL(π_B‖π_θ)/λ. It takes no training rollouts, so every explorer
// environment step ends up in the buffer; it is the form in which a PRM
// fitted step by step (prm.TargetStep) on other runs pays (see
// docs/experiments.md).
//
// Both are services: Run(ctx) consumes from JetStream until ctx ends and
// drains. The acting itself is policy.Rollout over an envs.Env; this
// package only wires it to the bus with deterministic ids and seeds, so a
// redelivered request or cycle reproduces exactly the trajectories it did
// before and JetStream's dedupe stores them once.
package producers
