package schemas

// Size limits of a trajectory record. Validate, the encoders and the decoders
// enforce them, so a hostile or broken producer cannot make a consumer
// allocate without bound. They are part of the protocol: raising one is safe
// for readers built with the new value only.
const (
	// MaxSteps is the most steps a trajectory may have (rows in its batch).
	MaxSteps = 4096
	// MaxAdmissible is the most admissible actions listed for one step.
	MaxAdmissible = 1024
	// MaxTextBytes is the longest any single text field may be, in bytes:
	// ids, names, the instruction, an observation, an action, one admissible
	// action.
	MaxTextBytes = 64 << 10
	// MaxTokens is the most token ids (and token log-probs) one step may carry.
	MaxTokens = 64 << 10
	// MaxMessageBytes is the largest encoded trajectory message.
	MaxMessageBytes = 16 << 20
	// MaxBatchTrajectories is the most trajectories in one batch message.
	MaxBatchTrajectories = 4096
	// MaxBatchBytes is the largest encoded batch message (NATS's own ceiling
	// on a payload). Note that a NATS server's default max_payload is 1 MiB:
	// a service replying with batches must size them to its server.
	MaxBatchBytes = 64 << 20
	// MaxRunNameBytes is the longest run name.
	MaxRunNameBytes = 64
)
