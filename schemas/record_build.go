package schemas

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// buildRecord lays t out as one record batch of trajectorySchema, a row per
// step. Columns are built straight from Go slices sized to the row count (no
// builders, no reallocation); t must be valid.
func buildRecord(t *Trajectory) arrow.Record {
	n := len(t.Steps)
	cols := make([]arrow.Array, numColumns)
	for i, d := range [numColumns]arrow.ArrayData{
		colID:             repeatedString(t.ID, n),
		colRun:            repeatedString(t.Run, n),
		colCycle:          fixedData(arrow.PrimitiveTypes.Int64, repeated(t.Cycle, n)),
		colSource:         repeatedString(string(t.Source), n),
		colPolicyVersion:  fixedData(arrow.PrimitiveTypes.Int64, repeated(t.PolicyVersion, n)),
		colProducer:       repeatedString(t.Producer, n),
		colSeq:            fixedData(arrow.PrimitiveTypes.Uint64, repeated(t.Seq, n)),
		colEnv:            repeatedString(t.Env, n),
		colTaskID:         repeatedString(t.TaskID, n),
		colTaskType:       repeatedString(t.TaskType, n),
		colTaskSeed:       fixedData(arrow.PrimitiveTypes.Int64, repeated(t.TaskSeed, n)),
		colSplit:          repeatedString(t.Split, n),
		colInstruction:    repeatedString(t.Instruction, n),
		colGroupID:        repeatedString(t.GroupID, n),
		colOutcomeReward:  fixedData(arrow.PrimitiveTypes.Float64, repeated(t.OutcomeReward, n)),
		colSuccess:        repeatedBool(t.Success, n),
		colCreatedAt:      createdAtData(t, n),
		colSwapped:        repeatedBool(t.Swapped, n),
		colDistinctStates: fixedData(arrow.PrimitiveTypes.Int32, repeated(t.DistinctStates, n)),
		colRepeatedVisits: fixedData(arrow.PrimitiveTypes.Int32, repeated(t.RepeatedVisits, n)),

		colStep:            fixedData(arrow.PrimitiveTypes.Int32, stepNumbers(n)),
		colObservation:     stepStrings(t.Steps, func(s *Step) string { return s.Observation }),
		colAdmissible:      admissibleData(t.Steps),
		colNumAdmissible:   fixedData(arrow.PrimitiveTypes.Int32, stepValues(t.Steps, func(s *Step) int32 { return s.NumAdmissible })),
		colAction:          stepStrings(t.Steps, func(s *Step) string { return s.Action }),
		colActionIndex:     fixedData(arrow.PrimitiveTypes.Int32, stepValues(t.Steps, func(s *Step) int32 { return s.ActionIndex })),
		colBehaviorLogProb: fixedData(arrow.PrimitiveTypes.Float64, stepValues(t.Steps, func(s *Step) float64 { return s.BehaviorLogProb })),
		colReward:          fixedData(arrow.PrimitiveTypes.Float64, stepValues(t.Steps, func(s *Step) float64 { return s.Reward })),
		colDenseReward:     fixedData(arrow.PrimitiveTypes.Float64, stepValues(t.Steps, func(s *Step) float64 { return s.DenseReward })),
		colStateKey:        fixedData(arrow.PrimitiveTypes.Uint64, stepValues(t.Steps, func(s *Step) uint64 { return s.StateKey })),
		colTokenIDs:        listData(colTokenIDs, t.Steps, func(s *Step) []int32 { return s.TokenIDs }),
		colTokenLogProbs:   listData(colTokenLogProbs, t.Steps, func(s *Step) []float32 { return s.TokenLogProbs }),
	} {
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	return array.NewRecord(trajectorySchema, cols, int64(n))
}

// fixedData wraps vals, without copying, as a non-null array of type dt.
func fixedData[T arrow.FixedWidthType](dt arrow.DataType, vals []T) arrow.ArrayData {
	return array.NewData(dt, len(vals), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.GetBytes(vals))}, nil, 0, 0)
}

// stringData wraps offsets and bytes as a non-null utf8 array.
func stringData(offsets []int32, data []byte) arrow.ArrayData {
	return array.NewData(arrow.BinaryTypes.String, len(offsets)-1, []*memory.Buffer{
		nil, memory.NewBufferBytes(arrow.GetBytes(offsets)), memory.NewBufferBytes(data),
	}, nil, 0, 0)
}

func repeated[T any](v T, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func repeatedString(s string, n int) arrow.ArrayData {
	offsets := make([]int32, n+1)
	data := make([]byte, 0, len(s)*n)
	for i := range n {
		data = append(data, s...)
		offsets[i+1] = int32(len(data))
	}
	return stringData(offsets, data)
}

func repeatedBool(v bool, n int) arrow.ArrayData {
	bits := make([]byte, bitutil.BytesForBits(int64(n)))
	bitutil.SetBitsTo(bits, 0, int64(n), v)
	return array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{nil, memory.NewBufferBytes(bits)}, nil, 0, 0)
}

// createdAtData is t.CreatedAt in nanoseconds on every row, or all nulls
// when it is the zero time.
func createdAtData(t *Trajectory, n int) arrow.ArrayData {
	if t.CreatedAt.IsZero() {
		validity := make([]byte, bitutil.BytesForBits(int64(n)))
		values := make([]arrow.Timestamp, n)
		return array.NewData(createdAtType, n, []*memory.Buffer{
			memory.NewBufferBytes(validity), memory.NewBufferBytes(arrow.GetBytes(values)),
		}, nil, n, 0)
	}
	return fixedData(createdAtType, repeated(arrow.Timestamp(t.CreatedAt.UnixNano()), n))
}

func stepNumbers(n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(i)
	}
	return s
}

func stepValues[T any](steps []Step, field func(*Step) T) []T {
	s := make([]T, len(steps))
	for i := range steps {
		s[i] = field(&steps[i])
	}
	return s
}

func stepStrings(steps []Step, field func(*Step) string) arrow.ArrayData {
	total := 0
	for i := range steps {
		total += len(field(&steps[i]))
	}
	offsets := make([]int32, len(steps)+1)
	data := make([]byte, 0, total)
	for i := range steps {
		data = append(data, field(&steps[i])...)
		offsets[i+1] = int32(len(data))
	}
	return stringData(offsets, data)
}

// admissibleData is the list<utf8> column of the steps' admissible actions.
func admissibleData(steps []Step) arrow.ArrayData {
	items, bytes := 0, 0
	for i := range steps {
		items += len(steps[i].Admissible)
		for _, a := range steps[i].Admissible {
			bytes += len(a)
		}
	}
	listOffsets := make([]int32, len(steps)+1)
	offsets := make([]int32, 1, items+1)
	data := make([]byte, 0, bytes)
	for i := range steps {
		for _, a := range steps[i].Admissible {
			data = append(data, a...)
			offsets = append(offsets, int32(len(data)))
		}
		listOffsets[i+1] = int32(len(offsets) - 1)
	}
	child := stringData(offsets, data)
	defer child.Release()
	return listOf(colAdmissible, listOffsets, child)
}

// listData is the list<T> column col of a per-step slice field.
func listData[T arrow.FixedWidthType](col int, steps []Step, field func(*Step) []T) arrow.ArrayData {
	total := 0
	for i := range steps {
		total += len(field(&steps[i]))
	}
	listOffsets := make([]int32, len(steps)+1)
	values := make([]T, 0, total)
	for i := range steps {
		values = append(values, field(&steps[i])...)
		listOffsets[i+1] = int32(len(values))
	}
	child := fixedData(listType(col).Elem(), values)
	defer child.Release()
	return listOf(col, listOffsets, child)
}

// listOf wraps list offsets and the child values as the list column col.
func listOf(col int, offsets []int32, child arrow.ArrayData) arrow.ArrayData {
	return array.NewData(listType(col), len(offsets)-1,
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.GetBytes(offsets))},
		[]arrow.ArrayData{child}, 0, 0)
}

func listType(col int) *arrow.ListType { return trajectorySchema.Field(col).Type.(*arrow.ListType) }
