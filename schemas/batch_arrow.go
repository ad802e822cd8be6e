package schemas

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/endian"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Schema metadata keys of a training batch. Floats are written with
// strconv's shortest exact form ('g', -1), so they read back bit for bit.
const (
	// BatchFormatKey holds BatchFormat.
	BatchFormatKey = "rspo.batch_format"

	batchKeyAlgo        = "rspo.loss.algo"
	batchKeyEpsOn       = "rspo.loss.eps_on"
	batchKeyEpsOff      = "rspo.loss.eps_off"
	batchKeyOffRatio    = "rspo.loss.off_ratio"
	batchKeyBeta        = "rspo.loss.beta"
	batchKeyEntropyCoef = "rspo.loss.entropy_coef"
	batchKeyAlpha       = "rspo.loss.alpha"
	batchKeyWeightOn    = "rspo.loss.weight_on"
	batchKeyWeightOff   = "rspo.loss.weight_off"
	batchKeyTrainer     = "rspo.trainer"
	batchKeyTrainerRNG  = "rspo.trainer_rng" // base64
)

// Column positions of a training batch.
const (
	bcRun = iota
	bcUpdate
	bcPolicyVersion
	bcTrajectoryID
	bcStep
	bcTaskID
	bcGroupID
	bcNormGroup
	bcOffPolicy
	bcGeneratingVersion
	bcInstruction
	bcObservation
	bcAdmissible
	bcAction
	bcActionIndex
	bcTokenIDs
	bcTokenLogProbs
	bcBehaviorLogProb
	bcReward
	bcAdvantage
	bcSwapCoef
	bcWeight
	bcOutcomeReward
	bcSuccess

	numBatchColumns
)

// batchFields are the columns of a training batch, none nullable.
var batchFields = []arrow.Field{
	bcRun:               {Name: "run", Type: arrow.BinaryTypes.String},
	bcUpdate:            {Name: "update", Type: arrow.PrimitiveTypes.Int64},
	bcPolicyVersion:     {Name: "policy_version", Type: arrow.PrimitiveTypes.Int64},
	bcTrajectoryID:      {Name: "trajectory_id", Type: arrow.BinaryTypes.String},
	bcStep:              {Name: "step", Type: arrow.PrimitiveTypes.Int32},
	bcTaskID:            {Name: "task_id", Type: arrow.BinaryTypes.String},
	bcGroupID:           {Name: "group_id", Type: arrow.BinaryTypes.String},
	bcNormGroup:         {Name: "norm_group", Type: arrow.PrimitiveTypes.Int32},
	bcOffPolicy:         {Name: "off_policy", Type: arrow.FixedWidthTypes.Boolean},
	bcGeneratingVersion: {Name: "generating_version", Type: arrow.PrimitiveTypes.Int64},
	bcInstruction:       {Name: "instruction", Type: arrow.BinaryTypes.String},
	bcObservation:       {Name: "observation", Type: arrow.BinaryTypes.String},
	bcAdmissible:        {Name: "admissible", Type: arrow.ListOfNonNullable(arrow.BinaryTypes.String)},
	bcAction:            {Name: "action", Type: arrow.BinaryTypes.String},
	bcActionIndex:       {Name: "action_index", Type: arrow.PrimitiveTypes.Int32},
	bcTokenIDs:          {Name: "token_ids", Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Int32)},
	bcTokenLogProbs:     {Name: "token_log_probs", Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Float32)},
	bcBehaviorLogProb:   {Name: "behavior_log_prob", Type: arrow.PrimitiveTypes.Float64},
	bcReward:            {Name: "reward", Type: arrow.PrimitiveTypes.Float64},
	bcAdvantage:         {Name: "advantage", Type: arrow.PrimitiveTypes.Float64},
	bcSwapCoef:          {Name: "swap_coef", Type: arrow.PrimitiveTypes.Float64},
	bcWeight:            {Name: "weight", Type: arrow.PrimitiveTypes.Float64},
	bcOutcomeReward:     {Name: "outcome_reward", Type: arrow.PrimitiveTypes.Float64},
	bcSuccess:           {Name: "success", Type: arrow.FixedWidthTypes.Boolean},
}

// TrainBatchSchema returns the Arrow schema of a training batch with b's
// metadata (the loss settings and BatchFormatKey), for tools that read the
// batch stream with Arrow directly.
func TrainBatchSchema(b *TrainBatch) *arrow.Schema {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	l := b.Loss
	keys := []string{BatchFormatKey, batchKeyAlgo, batchKeyEpsOn, batchKeyEpsOff, batchKeyOffRatio, batchKeyBeta,
		batchKeyEntropyCoef, batchKeyAlpha, batchKeyWeightOn, batchKeyWeightOff, batchKeyTrainer, batchKeyTrainerRNG}
	vals := []string{strconv.Itoa(BatchFormat), l.Algo, f(l.EpsOn), f(l.EpsOff), l.OffRatio, f(l.Beta),
		f(l.EntropyCoef), f(l.Alpha), f(l.WeightOn), f(l.WeightOff), string(b.Trainer),
		base64.StdEncoding.EncodeToString(b.TrainerRNG)}
	md := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema(batchFields, &md)
}

// EncodeTrainBatch validates b and returns it as an Arrow IPC stream: the
// schema message with the loss settings in its metadata, one record batch
// with a row per step, the end-of-stream marker. The bytes are
// deterministic. It returns a *ValidationError (ErrInvalid) for an invalid
// batch or one that encodes to more than MaxTrainBatchBytes.
func EncodeTrainBatch(b *TrainBatch) ([]byte, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	schema := TrainBatchSchema(b)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	for i := range b.Steps {
		appendBatchRow(rb, b, &b.Steps[i])
	}
	rec := rb.NewRecord()
	defer rec.Release()
	var out bytes.Buffer
	w := ipc.NewWriter(&out, ipc.WithSchema(schema), ipc.WithAllocator(memory.DefaultAllocator))
	if err := w.Write(rec); err != nil {
		return nil, fmt.Errorf("schemas: write training batch: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("schemas: write training batch: %w", err)
	}
	if out.Len() > MaxTrainBatchBytes {
		return nil, &ValidationError{Field: "batch", Reason: fmt.Sprintf("encodes to %d bytes, at most %d", out.Len(), MaxTrainBatchBytes)}
	}
	return out.Bytes(), nil
}

func appendBatchRow(rb *array.RecordBuilder, b *TrainBatch, s *BatchStep) {
	str := func(c int, v string) { rb.Field(c).(*array.StringBuilder).Append(v) }
	i64 := func(c int, v int64) { rb.Field(c).(*array.Int64Builder).Append(v) }
	i32 := func(c int, v int32) { rb.Field(c).(*array.Int32Builder).Append(v) }
	f64 := func(c int, v float64) { rb.Field(c).(*array.Float64Builder).Append(v) }
	boolean := func(c int, v bool) { rb.Field(c).(*array.BooleanBuilder).Append(v) }
	str(bcRun, b.Run)
	i64(bcUpdate, b.Update)
	i64(bcPolicyVersion, b.PolicyVersion)
	str(bcTrajectoryID, s.TrajectoryID)
	i32(bcStep, s.Step)
	str(bcTaskID, s.TaskID)
	str(bcGroupID, s.GroupID)
	i32(bcNormGroup, s.NormGroup)
	boolean(bcOffPolicy, s.OffPolicy)
	i64(bcGeneratingVersion, s.GeneratingVersion)
	str(bcInstruction, s.Instruction)
	str(bcObservation, s.Observation)
	adm := rb.Field(bcAdmissible).(*array.ListBuilder)
	adm.Append(true)
	adm.ValueBuilder().(*array.StringBuilder).AppendValues(s.Admissible, nil)
	str(bcAction, s.Action)
	i32(bcActionIndex, s.ActionIndex)
	ids := rb.Field(bcTokenIDs).(*array.ListBuilder)
	ids.Append(true)
	ids.ValueBuilder().(*array.Int32Builder).AppendValues(s.TokenIDs, nil)
	lps := rb.Field(bcTokenLogProbs).(*array.ListBuilder)
	lps.Append(true)
	lps.ValueBuilder().(*array.Float32Builder).AppendValues(s.TokenLogProbs, nil)
	f64(bcBehaviorLogProb, s.BehaviorLogProb)
	f64(bcReward, s.Reward)
	f64(bcAdvantage, s.Advantage)
	f64(bcSwapCoef, s.SwapCoef)
	f64(bcWeight, s.Weight)
	f64(bcOutcomeReward, s.OutcomeReward)
	boolean(bcSuccess, s.Success)
}

// DecodeTrainBatch reads a training batch written by EncodeTrainBatch and
// validates it. It never panics and shares no memory with data.
//
// Errors: *DecodeError (ErrDecode) for bytes that are larger than
// MaxTrainBatchBytes, not one complete Arrow IPC stream of one record
// batch, or that hold nulls or unreadable metadata; *SchemaError
// (ErrSchemaVersion) for another BatchFormat or other columns;
// *ValidationError (ErrInvalid) for a batch Validate rejects or whose
// run, update or policy version differs between rows.
func DecodeTrainBatch(data []byte) (b *TrainBatch, err error) {
	if len(data) > MaxTrainBatchBytes {
		return nil, &DecodeError{Reason: fmt.Sprintf("training batch of %d bytes, at most %d", len(data), MaxTrainBatchBytes)}
	}
	defer func() {
		if p := recover(); p != nil {
			b, err = nil, &DecodeError{Reason: "corrupt Arrow data", Err: fmt.Errorf("%v", p)}
		}
	}()
	mr := &messageReader{b: data}
	arena := &decodeArena{}
	arena.reset(len(data))
	r, err := ipc.NewReaderFromMessageReader(mr, ipc.WithAllocator(arena))
	if err != nil {
		return nil, streamError(mr, "not an Arrow IPC stream", err)
	}
	defer r.Release()
	b = &TrainBatch{}
	if err := readBatchSchema(r.Schema(), b); err != nil {
		return nil, err
	}
	records := 0
	for r.Next() {
		if records++; records > 1 {
			return nil, &DecodeError{Reason: "more than one record batch"}
		}
		if err := readBatchRecord(r.Record(), b); err != nil {
			return nil, err
		}
	}
	if err := r.Err(); err != nil {
		return nil, streamError(mr, "corrupt record batch", err)
	}
	if err := mr.finish(); err != nil {
		return nil, err
	}
	if records == 0 {
		return nil, &DecodeError{Reason: "the stream holds no record batch"}
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return b, nil
}

// readBatchSchema checks the columns and reads the metadata into b.
func readBatchSchema(s *arrow.Schema, b *TrainBatch) error {
	md := s.Metadata()
	version, ok := md.GetValue(BatchFormatKey)
	if !ok {
		return &SchemaError{Reason: "no " + BatchFormatKey + " in the schema metadata (not a training batch)"}
	}
	if version != strconv.Itoa(BatchFormat) {
		return &SchemaError{Version: version, Reason: fmt.Sprintf("training batch format %s, this code reads %d", version, BatchFormat)}
	}
	if s.Endianness() != endian.NativeEndian {
		return &SchemaError{Version: version, Reason: "written with a different byte order"}
	}
	if s.NumFields() != numBatchColumns {
		return &SchemaError{Version: version, Reason: fmt.Sprintf("%d columns, want %d", s.NumFields(), numBatchColumns)}
	}
	for i, want := range batchFields {
		f := s.Field(i)
		if f.Name != want.Name || f.Nullable != want.Nullable || !arrow.TypeEqual(f.Type, want.Type) {
			return &SchemaError{Version: version, Reason: fmt.Sprintf("column %d is %s, want %s", i, f, want)}
		}
	}
	var err error
	num := func(key string) float64 {
		v, ok := md.GetValue(key)
		if !ok {
			err = &DecodeError{Reason: "no " + key + " in the schema metadata"}
			return 0
		}
		f, perr := strconv.ParseFloat(v, 64)
		if perr != nil && err == nil {
			err = &DecodeError{Reason: fmt.Sprintf("metadata %s: %v", key, perr)}
		}
		return f
	}
	text := func(key string) string {
		v, ok := md.GetValue(key)
		if !ok && err == nil {
			err = &DecodeError{Reason: "no " + key + " in the schema metadata"}
		}
		return v
	}
	b.Loss = BatchLoss{Algo: text(batchKeyAlgo), EpsOn: num(batchKeyEpsOn), EpsOff: num(batchKeyEpsOff),
		OffRatio: text(batchKeyOffRatio), Beta: num(batchKeyBeta), EntropyCoef: num(batchKeyEntropyCoef),
		Alpha: num(batchKeyAlpha), WeightOn: num(batchKeyWeightOn), WeightOff: num(batchKeyWeightOff)}
	if tc := text(batchKeyTrainer); tc != "" {
		b.Trainer = []byte(tc)
	}
	if rng := text(batchKeyTrainerRNG); rng != "" && err == nil {
		if len(rng) > 2*MaxTrainerRNGBytes {
			return &DecodeError{Reason: fmt.Sprintf("metadata %s of %d bytes", batchKeyTrainerRNG, len(rng))}
		}
		if b.TrainerRNG, err = base64.StdEncoding.DecodeString(rng); err != nil {
			return &DecodeError{Reason: fmt.Sprintf("metadata %s: %v", batchKeyTrainerRNG, err)}
		}
	}
	return err
}

// readBatchRecord reads the rows of rec into b.Steps, with b's run,
// update and policy version from the first row (every row must agree).
func readBatchRecord(rec arrow.Record, b *TrainBatch) error {
	n := int(rec.NumRows())
	if n == 0 || n > MaxTrainBatchRows {
		return &ValidationError{Field: "steps", Reason: fmt.Sprintf("%d rows, want 1..%d", n, MaxTrainBatchRows)}
	}
	for c := range numBatchColumns {
		col := rec.Column(c)
		if col.Len() != n || col.NullN() != 0 {
			return &DecodeError{Reason: fmt.Sprintf("column %s: %d values and %d nulls in a batch of %d rows", batchFields[c].Name, col.Len(), col.NullN(), n)}
		}
	}
	str := func(c int) *array.String { return rec.Column(c).(*array.String) }
	i64 := func(c int) *array.Int64 { return rec.Column(c).(*array.Int64) }
	i32 := func(c int) *array.Int32 { return rec.Column(c).(*array.Int32) }
	f64 := func(c int) *array.Float64 { return rec.Column(c).(*array.Float64) }
	boolean := func(c int) *array.Boolean { return rec.Column(c).(*array.Boolean) }
	run, update, version := str(bcRun), i64(bcUpdate), i64(bcPolicyVersion)
	b.Run, b.Update, b.PolicyVersion = run.Value(0), update.Value(0), version.Value(0)
	adm, err := batchList[*array.String](rec.Column(bcAdmissible), MaxAdmissible)
	if err != nil {
		return err
	}
	ids, err := batchList[*array.Int32](rec.Column(bcTokenIDs), MaxTokens)
	if err != nil {
		return err
	}
	lps, err := batchList[*array.Float32](rec.Column(bcTokenLogProbs), MaxTokens)
	if err != nil {
		return err
	}
	b.Steps = make([]BatchStep, n)
	for i := range n {
		if run.Value(i) != b.Run || update.Value(i) != b.Update || version.Value(i) != b.PolicyVersion {
			return &ValidationError{Field: fmt.Sprintf("steps[%d]", i), Reason: "run, update or policy_version differs from row 0 (a batch holds one update of one run)"}
		}
		b.Steps[i] = BatchStep{
			TrajectoryID: clone(str(bcTrajectoryID).Value(i)), Step: i32(bcStep).Value(i),
			TaskID: clone(str(bcTaskID).Value(i)), GroupID: clone(str(bcGroupID).Value(i)),
			NormGroup: i32(bcNormGroup).Value(i), OffPolicy: boolean(bcOffPolicy).Value(i),
			GeneratingVersion: i64(bcGeneratingVersion).Value(i),
			Instruction:       clone(str(bcInstruction).Value(i)), Observation: clone(str(bcObservation).Value(i)),
			Admissible: adm.strings(i), Action: clone(str(bcAction).Value(i)), ActionIndex: i32(bcActionIndex).Value(i),
			TokenIDs:        listValues(ids, i, func(a *array.Int32, k int) int32 { return a.Value(k) }),
			TokenLogProbs:   listValues(lps, i, func(a *array.Float32, k int) float32 { return a.Value(k) }),
			BehaviorLogProb: f64(bcBehaviorLogProb).Value(i), Reward: f64(bcReward).Value(i),
			Advantage: f64(bcAdvantage).Value(i), SwapCoef: f64(bcSwapCoef).Value(i), Weight: f64(bcWeight).Value(i),
			OutcomeReward: f64(bcOutcomeReward).Value(i), Success: boolean(bcSuccess).Value(i),
		}
	}
	b.Run = clone(b.Run)
	return nil
}

// listCol is a list column with its offsets checked against its values.
type listCol[A arrow.Array] struct {
	l      *array.List
	values A
}

// batchList checks every row's offsets of a list column (in order, within
// the values, at most max items) and returns it.
func batchList[A arrow.Array](col arrow.Array, max int) (listCol[A], error) {
	l := col.(*array.List)
	values, ok := l.ListValues().(A)
	if !ok || values.NullN() != 0 {
		return listCol[A]{}, &DecodeError{Reason: fmt.Sprintf("list column of %s has nulls or another item type", l.DataType())}
	}
	for i := range l.Len() {
		start, end := l.ValueOffsets(i)
		if start < 0 || end < start || end > int64(values.Len()) || end-start > int64(max) {
			return listCol[A]{}, &DecodeError{Reason: fmt.Sprintf("list row %d has offsets %d..%d over %d items (at most %d a row)", i, start, end, values.Len(), max)}
		}
	}
	return listCol[A]{l: l, values: values}, nil
}

// strings returns row i of a list of strings, nil when empty.
func (l listCol[A]) strings(i int) []string {
	return listValues(l, i, func(a A, k int) string { return clone(any(a).(*array.String).Value(k)) })
}

func listValues[A arrow.Array, T any](l listCol[A], i int, at func(A, int) T) []T {
	start, end := l.l.ValueOffsets(i)
	if start == end {
		return nil
	}
	out := make([]T, 0, end-start)
	for k := start; k < end; k++ {
		out = append(out, at(l.values, int(k)))
	}
	return out
}

// clone copies s out of the decode's buffers.
func clone(s string) string { return strings.Clone(s) }
