// Package policy is rspo's trainable agent: a compact neural policy that reads
// text and chooses among the admissible actions of a turn, in the manner of
// DRRN-style text-game agents.
//
// A State (instruction, observation, earlier turns, admissible actions) is
// turned into hashed sparse features: words and bigrams of the instruction,
// the observation and the recent actions, and the words of every earlier
// action, on the state side; on the action side its words and bigrams, the
// words of the observation text about its object ("click[b0x1]" → that
// product's line), its crossings with the instruction's words, the
// previous verb and every verb used so far (so "heat" in the goal can learn
// to prefer "microwave", and "take" then "clean" to prefer "put"), how each
// number of the text about its object compares with each number of the
// instruction, keyed by the instruction's word before it (a result line's
// "$45.99" against "price lower than 60.00": below the limit; without it a
// price is only a hashed word), whether each number the action names itself
// is one the instruction names ("click[55 inch]" for "a 55 inch tv"; an
// option row lists every value, so its context cannot tell them apart),
// and a few environment-agnostic match flags computed from the text (the
// share of the action's words the instruction names — its numbers too,
// when the instruction names quantities —, the action's object is the goal
// object, its target was already visited, it repeats the previous action,
// ...). Every
// hashed feature has a learned linear weight; the state features and the
// action's own text (not the crossings and comparisons) also feed learned
// embeddings, which with the flags go through a small MLP. An action's
// score is the MLP output plus its linear weights; a softmax with
// temperature over the admissible set gives the distribution. A value head
// on the state features serves as PPO's critic. A fresh policy is exactly uniform.
//
// Gradients are computed by hand-written backprop (checked against finite
// differences in the tests) and applied with Adam and gradient-norm clipping.
// A policy is cheap to Clone and has a versioned, checksummed binary snapshot
// format. Everything is deterministic given the seeds.
//
// The dense layers and the embedding sums run hand-written vector kernels
// on amd64 (AVX2, and AVX-512 where the CPU has it) that keep the
// portable code's order of operations: gonum's matrix products and
// math.Tanh, bit for bit. Which kernels a CPU selects changes the speed,
// never a result; the golden tests pin rollouts, gradients and Adam steps
// with each set of kernels.
//
// The package knows nothing about NATS; Rollout runs one episode of an
// envs.Env in process and returns a schemas.Trajectory.
package policy
