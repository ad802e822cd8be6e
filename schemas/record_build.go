package schemas

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// slab hands out disjoint slices of one reusable backing array: a bump
// allocator for the column buffers of one encode. When it runs out it starts
// a larger array (slices already handed out keep the old one alive).
type slab[T any] struct{ buf []T }

// take returns a slice of n elements with capacity n. Its contents are
// whatever the previous encode left: callers overwrite every element.
func (s *slab[T]) take(n int) []T {
	if len(s.buf)+n > cap(s.buf) {
		s.buf = make([]T, 0, max(2*cap(s.buf), n, 256))
	}
	start := len(s.buf)
	s.buf = s.buf[:start+n]
	return s.buf[start : start+n : start+n]
}

func (s *slab[T]) reset() { s.buf = s.buf[:0] }

// scratch holds the column buffers of one record batch. The IPC writer
// copies them into the message, so they are reused by the next encode.
type scratch struct {
	bytes slab[byte]
	i32   slab[int32]
	i64   slab[int64]
	u64   slab[uint64]
	f64   slab[float64]
	f32   slab[float32]
}

func (s *scratch) reset() {
	s.bytes.reset()
	s.i32.reset()
	s.i64.reset()
	s.u64.reset()
	s.f64.reset()
	s.f32.reset()
}

// buildRecord lays t out as one record batch of trajectorySchema, a row per
// step. Columns are built straight into buffers sized to the row count (no
// builders, no reallocation). t must be valid. The record's buffers belong
// to s and are valid until its next reset.
func (s *scratch) buildRecord(t *Trajectory) arrow.Record {
	n := len(t.Steps)
	steps := t.Steps
	cols := make([]arrow.Array, numColumns)
	for i, d := range [numColumns]arrow.ArrayData{
		colID:             s.repeatedString(t.ID, n),
		colRun:            s.repeatedString(t.Run, n),
		colCycle:          fixedData(arrow.PrimitiveTypes.Int64, fill(s.i64.take(n), t.Cycle)),
		colSource:         s.repeatedString(string(t.Source), n),
		colPolicyVersion:  fixedData(arrow.PrimitiveTypes.Int64, fill(s.i64.take(n), t.PolicyVersion)),
		colProducer:       s.repeatedString(t.Producer, n),
		colSeq:            fixedData(arrow.PrimitiveTypes.Uint64, fill(s.u64.take(n), t.Seq)),
		colEnv:            s.repeatedString(t.Env, n),
		colTaskID:         s.repeatedString(t.TaskID, n),
		colTaskType:       s.repeatedString(t.TaskType, n),
		colTaskSeed:       fixedData(arrow.PrimitiveTypes.Int64, fill(s.i64.take(n), t.TaskSeed)),
		colSplit:          s.repeatedString(t.Split, n),
		colInstruction:    s.repeatedString(t.Instruction, n),
		colGroupID:        s.repeatedString(t.GroupID, n),
		colOutcomeReward:  fixedData(arrow.PrimitiveTypes.Float64, fill(s.f64.take(n), t.OutcomeReward)),
		colSuccess:        s.repeatedBool(t.Success, n),
		colCreatedAt:      s.createdAt(t, n),
		colSwapped:        s.repeatedBool(t.Swapped, n),
		colDistinctStates: fixedData(arrow.PrimitiveTypes.Int32, fill(s.i32.take(n), t.DistinctStates)),
		colRepeatedVisits: fixedData(arrow.PrimitiveTypes.Int32, fill(s.i32.take(n), t.RepeatedVisits)),

		colStep:            fixedData(arrow.PrimitiveTypes.Int32, stepNumbers(s.i32.take(n))),
		colObservation:     s.stepStrings(steps, func(s *Step) string { return s.Observation }),
		colAdmissible:      s.admissible(steps),
		colNumAdmissible:   fixedData(arrow.PrimitiveTypes.Int32, stepValues(s.i32.take(n), steps, func(s *Step) int32 { return s.NumAdmissible })),
		colAction:          s.stepStrings(steps, func(s *Step) string { return s.Action }),
		colActionIndex:     fixedData(arrow.PrimitiveTypes.Int32, stepValues(s.i32.take(n), steps, func(s *Step) int32 { return s.ActionIndex })),
		colBehaviorLogProb: fixedData(arrow.PrimitiveTypes.Float64, stepValues(s.f64.take(n), steps, func(s *Step) float64 { return s.BehaviorLogProb })),
		colReward:          fixedData(arrow.PrimitiveTypes.Float64, stepValues(s.f64.take(n), steps, func(s *Step) float64 { return s.Reward })),
		colDenseReward:     fixedData(arrow.PrimitiveTypes.Float64, stepValues(s.f64.take(n), steps, func(s *Step) float64 { return s.DenseReward })),
		colStateKey:        fixedData(arrow.PrimitiveTypes.Uint64, stepValues(s.u64.take(n), steps, func(s *Step) uint64 { return s.StateKey })),
		colTokenIDs:        fixedList(s, &s.i32, colTokenIDs, steps, func(s *Step) []int32 { return s.TokenIDs }),
		colTokenLogProbs:   fixedList(s, &s.f32, colTokenLogProbs, steps, func(s *Step) []float32 { return s.TokenLogProbs }),
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

func fill[T any](s []T, v T) []T {
	for i := range s {
		s[i] = v
	}
	return s
}

func stepNumbers(s []int32) []int32 {
	for i := range s {
		s[i] = int32(i)
	}
	return s
}

func stepValues[T any](s []T, steps []Step, field func(*Step) T) []T {
	for i := range steps {
		s[i] = field(&steps[i])
	}
	return s
}

func (s *scratch) repeatedString(v string, n int) arrow.ArrayData {
	offsets := s.i32.take(n + 1)
	data := s.bytes.take(len(v) * n)[:0]
	offsets[0] = 0
	for i := range n {
		data = append(data, v...)
		offsets[i+1] = int32(len(data))
	}
	return stringData(offsets, data)
}

// bitmap returns n bits set to v, the padding bits of the last byte clear
// so that the bytes are deterministic.
func (s *scratch) bitmap(n int, v bool) []byte {
	bits := s.bytes.take(int(bitutil.BytesForBits(int64(n))))
	clear(bits)
	bitutil.SetBitsTo(bits, 0, int64(n), v)
	return bits
}

func (s *scratch) repeatedBool(v bool, n int) arrow.ArrayData {
	return array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{nil, memory.NewBufferBytes(s.bitmap(n, v))}, nil, 0, 0)
}

// createdAt is t.CreatedAt in nanoseconds on every row, or all nulls when it
// is the zero time.
func (s *scratch) createdAt(t *Trajectory, n int) arrow.ArrayData {
	if t.CreatedAt.IsZero() {
		return array.NewData(createdAtType, n, []*memory.Buffer{
			memory.NewBufferBytes(s.bitmap(n, false)), memory.NewBufferBytes(arrow.GetBytes(fill(s.i64.take(n), 0))),
		}, nil, n, 0)
	}
	return fixedData(createdAtType, fill(s.i64.take(n), t.CreatedAt.UnixNano()))
}

func (s *scratch) stepStrings(steps []Step, field func(*Step) string) arrow.ArrayData {
	total := 0
	for i := range steps {
		total += len(field(&steps[i]))
	}
	offsets := s.i32.take(len(steps) + 1)
	data := s.bytes.take(total)[:0]
	offsets[0] = 0
	for i := range steps {
		data = append(data, field(&steps[i])...)
		offsets[i+1] = int32(len(data))
	}
	return stringData(offsets, data)
}

// admissible is the list<utf8> column of the steps' admissible actions.
func (s *scratch) admissible(steps []Step) arrow.ArrayData {
	items, size := 0, 0
	for i := range steps {
		items += len(steps[i].Admissible)
		for _, a := range steps[i].Admissible {
			size += len(a)
		}
	}
	listOffsets := s.i32.take(len(steps) + 1)
	offsets := s.i32.take(items + 1)
	data := s.bytes.take(size)[:0]
	listOffsets[0], offsets[0] = 0, 0
	item := 0
	for i := range steps {
		for _, a := range steps[i].Admissible {
			data = append(data, a...)
			item++
			offsets[item] = int32(len(data))
		}
		listOffsets[i+1] = int32(item)
	}
	child := stringData(offsets, data)
	defer child.Release()
	return listOf(colAdmissible, listOffsets, child)
}

// fixedList is the list<T> column col of a per-step slice field, its values
// taken from the slab values.
func fixedList[T arrow.FixedWidthType](s *scratch, values *slab[T], col int, steps []Step, field func(*Step) []T) arrow.ArrayData {
	total := 0
	for i := range steps {
		total += len(field(&steps[i]))
	}
	listOffsets := s.i32.take(len(steps) + 1)
	vals := values.take(total)[:0]
	listOffsets[0] = 0
	for i := range steps {
		vals = append(vals, field(&steps[i])...)
		listOffsets[i+1] = int32(len(vals))
	}
	child := fixedData(listType(col).Elem(), vals)
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
