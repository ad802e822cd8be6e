package schemas

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/endian"
)

// SchemaVersionKey is the Arrow schema metadata key holding SchemaVersion.
const SchemaVersionKey = "rspo.schema_version"

// Column positions in the trajectory record batch. Columns colID to
// colRepeatedVisits hold trajectory fields and repeat on every row; colStep
// (the row's step number, 0, 1, ...) and the columns after it hold the step
// of that row.
const (
	colID = iota
	colRun
	colCycle
	colSource
	colPolicyVersion
	colProducer
	colSeq
	colEnv
	colTaskID
	colTaskType
	colTaskSeed
	colSplit
	colInstruction
	colGroupID
	colOutcomeReward
	colSuccess
	colCreatedAt
	colSwapped
	colDistinctStates
	colRepeatedVisits

	colStep
	colObservation
	colAdmissible
	colNumAdmissible
	colAction
	colActionIndex
	colBehaviorLogProb
	colReward
	colDenseReward
	colStateKey
	colTokenIDs
	colTokenLogProbs

	numColumns
)

// createdAtType is the type of created_at: nanoseconds since the Unix epoch, UTC.
var createdAtType = &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}

// trajectorySchema is the Arrow schema of a trajectory record batch. Every
// column is non-nullable except created_at, whose null stands for an unknown
// (zero) time. The lists' items are non-nullable too.
var trajectorySchema = arrow.NewSchema([]arrow.Field{
	colID:             {Name: "id", Type: arrow.BinaryTypes.String},
	colRun:            {Name: "run", Type: arrow.BinaryTypes.String},
	colCycle:          {Name: "cycle", Type: arrow.PrimitiveTypes.Int64},
	colSource:         {Name: "source", Type: arrow.BinaryTypes.String},
	colPolicyVersion:  {Name: "policy_version", Type: arrow.PrimitiveTypes.Int64},
	colProducer:       {Name: "producer", Type: arrow.BinaryTypes.String},
	colSeq:            {Name: "seq", Type: arrow.PrimitiveTypes.Uint64},
	colEnv:            {Name: "env", Type: arrow.BinaryTypes.String},
	colTaskID:         {Name: "task_id", Type: arrow.BinaryTypes.String},
	colTaskType:       {Name: "task_type", Type: arrow.BinaryTypes.String},
	colTaskSeed:       {Name: "task_seed", Type: arrow.PrimitiveTypes.Int64},
	colSplit:          {Name: "split", Type: arrow.BinaryTypes.String},
	colInstruction:    {Name: "instruction", Type: arrow.BinaryTypes.String},
	colGroupID:        {Name: "group_id", Type: arrow.BinaryTypes.String},
	colOutcomeReward:  {Name: "outcome_reward", Type: arrow.PrimitiveTypes.Float64},
	colSuccess:        {Name: "success", Type: arrow.FixedWidthTypes.Boolean},
	colCreatedAt:      {Name: "created_at", Type: createdAtType, Nullable: true},
	colSwapped:        {Name: "swapped", Type: arrow.FixedWidthTypes.Boolean},
	colDistinctStates: {Name: "distinct_states", Type: arrow.PrimitiveTypes.Int32},
	colRepeatedVisits: {Name: "repeated_visits", Type: arrow.PrimitiveTypes.Int32},

	colStep:            {Name: "step", Type: arrow.PrimitiveTypes.Int32},
	colObservation:     {Name: "observation", Type: arrow.BinaryTypes.String},
	colAdmissible:      {Name: "admissible", Type: arrow.ListOfNonNullable(arrow.BinaryTypes.String)},
	colNumAdmissible:   {Name: "num_admissible", Type: arrow.PrimitiveTypes.Int32},
	colAction:          {Name: "action", Type: arrow.BinaryTypes.String},
	colActionIndex:     {Name: "action_index", Type: arrow.PrimitiveTypes.Int32},
	colBehaviorLogProb: {Name: "behavior_log_prob", Type: arrow.PrimitiveTypes.Float64},
	colReward:          {Name: "reward", Type: arrow.PrimitiveTypes.Float64},
	colDenseReward:     {Name: "dense_reward", Type: arrow.PrimitiveTypes.Float64},
	colStateKey:        {Name: "state_key", Type: arrow.PrimitiveTypes.Uint64},
	colTokenIDs:        {Name: "token_ids", Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Int32)},
	colTokenLogProbs:   {Name: "token_log_probs", Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Float32)},
}, func() *arrow.Metadata {
	md := arrow.NewMetadata([]string{SchemaVersionKey}, []string{strconv.Itoa(SchemaVersion)})
	return &md
}())

// TrajectorySchema returns the Arrow schema of a trajectory record batch, for
// tools that read the streams with Arrow directly. The schema is shared and
// must not be modified.
func TrajectorySchema() *arrow.Schema { return trajectorySchema }

// checkSchema reports whether got is the schema this code writes. A missing
// or different version, and any difference in the columns, is a *SchemaError.
func checkSchema(got *arrow.Schema) error {
	version, ok := got.Metadata().GetValue(SchemaVersionKey)
	if !ok {
		return &SchemaError{Reason: "no " + SchemaVersionKey + " in the schema metadata"}
	}
	if version != strconv.Itoa(SchemaVersion) {
		return &SchemaError{Version: version, Reason: "a different schema version"}
	}
	if got.Endianness() != endian.NativeEndian {
		return &SchemaError{Version: version, Reason: "written with a different byte order"}
	}
	if got.NumFields() != numColumns {
		return &SchemaError{Version: version, Reason: fmt.Sprintf("%d columns, want %d", got.NumFields(), numColumns)}
	}
	for i, want := range trajectorySchema.Fields() {
		f := got.Field(i)
		if f.Name != want.Name || f.Nullable != want.Nullable || !arrow.TypeEqual(f.Type, want.Type) {
			return &SchemaError{Version: version, Reason: fmt.Sprintf("column %d is %s, want %s", i, f, want)}
		}
	}
	return nil
}
