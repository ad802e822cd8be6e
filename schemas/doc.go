// Package schemas holds rspo's data contracts: the trajectory and step records
// that flow through the streams, the control events, the rollout request, the
// metrics event, and their wire encodings (Arrow IPC for trajectories, JSON
// for the rest).
//
// Every other package depends on this one; it depends on nothing of ours.
// A change to a field here is a change to the public protocol: bump
// SchemaVersion and regenerate the golden files under testdata/
// (go test ./schemas -update).
//
// # Trajectories on the wire
//
// EncodeTrajectory writes one trajectory as an Arrow IPC stream (the
// "streaming format", usually stored as .arrows): the schema message, one
// record batch with a row per step, and the end-of-stream marker. The schema
// (TrajectorySchema) has the trajectory fields first, repeated on every row
// (id, run, cycle, source, ..., repeated_visits), then the step fields
// (step, observation, admissible list<utf8>, ..., token_ids list<int32>,
// token_log_probs list<float32>); column names match the JSON tags. Its
// metadata holds SchemaVersionKey. created_at is timestamp[ns, UTC] and null
// for the zero time; every other column and list item is non-null. Any Arrow
// implementation can read the streams; EncodeTrajectoryBatch writes several
// trajectories as successive record batches of one stream.
//
// Encoding is deterministic: equal trajectories give equal bytes.
//
// PatchLabels relabels an encoded trajectory without encoding it again: it
// copies the message and overwrites the fixed-width label columns (reward,
// dense_reward, swapped, distinct_states, repeated_visits), giving the bytes
// EncodeTrajectory would write for the relabelled trajectory. It refuses
// (ErrNotPatchable) any message whose columns it cannot locate exactly.
//
// DecodeTrajectory reads the messages this package writes straight from
// their bytes, without building Arrow arrays (about ten allocations per
// trajectory, all its strings in one); any other stream it hands to
// Arrow's IPC reader. Both paths decode the same bytes to the same
// trajectory or the same error (FuzzDecodeDirect).
//
// # Validation and errors
//
// Trajectory.Validate, the encoders and the decoders apply the same rules
// and the size limits in limits.go. Errors come in three classes, told
// apart with errors.Is and errors.As:
//
//   - ErrInvalid (*ValidationError): a record breaks a rule; Field names
//     the offending field, e.g. "steps[3].behavior_log_prob".
//   - ErrSchemaVersion (*SchemaError): a message was written with another
//     schema version or another column layout.
//   - ErrDecode (*DecodeError): bytes that are not a complete, well-formed
//     trajectory stream.
//
// The decoders never panic and bound the memory they use by the message
// size, whatever the input (see FuzzDecodeTrajectory).
package schemas
