// Package producers holds the services that act in environments and
// publish trajectories: actors, which roll out the target policy π_θ for
// the learner's rollout requests, and explorers, which run RSPO's stage 1
// — copy π_θ, obtain π_B as the cycle's plan says, and publish its
// rollouts for the swapper.
//
// How an explorer explores is decided by the learner and carried by every
// cycle's plan (schemas.CyclePlan): the paper's trained explorer (π_B
// trained on dense PRM rewards with the learner's own trainer settings),
// the frozen and random-PRM controls, or steering instead of training
// (CyclePlan.Tilt): π_B(a|s) ∝ π_θ(a|s)·exp(λ·r̂(s,a)), the per-step
// closed-form maximiser of E[r̂] − KL(π_B‖π_θ)/λ. A tilted explorer takes
// no training rollouts, so every explorer environment step ends up in the
// buffer; it is the form in which a PRM fitted step by step
// (prm.TargetStep) on other runs pays (docs/algorithm.md, "Recipes").
//
// A cycle's exploration comes as shards (schemas.ExploreShard) on a work
// queue the run's explorers share: each explores its shard's tasks of the
// cycle's plan, read from the cycle.started event, with the seeds and ids
// the whole cycle would give them.
//
// Actors also play the learner's evaluation shards (schemas.EvalShard on
// rspo.<run>.work.eval, a second shared durable) with the agent their
// backend gives (EvalBackend) and answer each with its per-episode results.
//
// Both are services: Run(ctx) consumes typed, run-checked messages
// (streams.Typed) until ctx ends and drains. The acting itself is the
// rollout core (package rollout) over an envs.Env; this package only wires
// it to the bus with the core's deterministic ids and seeds, so a
// redelivered request or shard reproduces exactly the trajectories it did
// before and JetStream's dedupe stores them once.
package producers
