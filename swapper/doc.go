// Package swapper turns explorer trajectories into replay-buffer records: the
// "reward swap" of RSPO.
//
// An explorer's trajectory carries the PRM's dense labels as its per-step
// rewards. Relabel replaces them with the environment's form of the outcome
// reward (0 on every step but the last, which carries the outcome), keeps the
// dense values only as the DenseReward provenance column, leaves the
// behaviour log-probs untouched (the learner's off-policy ratio needs them),
// and computes the buffer's priority keys from the state keys: the number of
// distinct states and of repeated visits.
//
// A Verifier can replay a trajectory's actions in its environment from the
// task seed, so a producer cannot smuggle a fake success into the buffer.
//
// The package knows nothing of NATS: swapper/swappersvc is the service
// that wires it to the bus. There the record is not encoded again: Relabel's
// result is written into the explorer message's own bytes
// (schemas.PatchLabels), which decode to exactly that result
// (TestRelabelInBytes, FuzzRelabelInBytes).
package swapper
