// Package rollout is the pure core of acting in environments: the episodes
// to play (task, seed, id and provenance of each), playing them in
// parallel with a policy (All), the deterministic seeds and trajectory ids
// that make a redelivered request reproduce exactly the trajectories it did
// before, the conversion between environment tasks and the task references
// carried on the bus, an environment cache, and the one evaluator every
// caller uses (Evaluate).
//
// It knows nothing of NATS: the actor and explorer services, the learner's
// in-run evaluation, the swapper's verification, `rspo eval`, `rspo prm
// collect` and the experiments all build on it.
package rollout
