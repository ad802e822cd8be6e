package schemas

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
)

// recordToTrajectory turns one record batch of trajectorySchema into a
// validated Trajectory that shares no memory with the record.
func recordToTrajectory(rec arrow.Record) (*Trajectory, error) {
	n := int(rec.NumRows())
	if err := checkRows(n); err != nil {
		return nil, err
	}
	r := &columnReader{n: n}
	for c := range numColumns {
		r.cols[c].fromArrow(rec.Column(c).Data(), &r.kids[c])
	}
	return r.trajectory()
}

// checkRows checks a record batch's number of rows, a trajectory's steps.
func checkRows(n int) error {
	switch {
	case n == 0:
		return &ValidationError{Field: "steps", Reason: "record batch has no rows (a trajectory has at least one step)"}
	case n > MaxSteps:
		return &ValidationError{Field: "steps", Reason: fmt.Sprintf("%d rows, at most %d", n, MaxSteps)}
	}
	return nil
}

// trajectory reads and validates the trajectory of the loaded columns.
func (r *columnReader) trajectory() (*Trajectory, error) {
	t := &Trajectory{}
	r.text = make([]byte, 0, r.textBound())
	r.checkShape()
	r.readHeader(t)
	t.Steps = r.readSteps()
	if r.err != nil {
		return nil, r.err
	}
	if _, err := t.validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// colData is what the column reader sees of one array: its length, null
// count, offset, buffers (validity; offsets or values; string bytes — nil
// where absent) and, for a list, its child. It is filled either from an
// Arrow array (fromArrow) or straight from the message body
// (loadRecordBatch), the same way in both cases.
type colData struct {
	length, offset, nulls int
	// lazy, when set, gives the null count (Arrow counts an unknown one
	// from the validity bitmap on first use).
	lazy arrow.ArrayData
	bufs [3][]byte
	// children is the number of child arrays; child is the first.
	children int
	child    *colData
}

func (d *colData) nullN() int {
	if d.lazy != nil {
		return d.lazy.NullN()
	}
	return d.nulls
}

// fromArrow describes the Arrow array a, using kid for its child.
func (d *colData) fromArrow(a arrow.ArrayData, kid *colData) {
	*d = colData{length: a.Len(), offset: a.Offset(), lazy: a, children: len(a.Children())}
	for i, b := range a.Buffers() {
		if i < len(d.bufs) && b != nil {
			d.bufs[i] = b.Bytes()
		}
	}
	if d.children > 0 {
		kid.fromArrow(a.Children()[0], nil)
		d.child = kid
	}
}

// columnReader reads the columns of one record batch, checking every buffer
// before it is indexed. The first problem is kept in err and turns every
// later read into a no-op returning a zero value.
type columnReader struct {
	n   int
	err error
	// text holds the bytes of the trajectory's strings, each a string
	// over its part (see str).
	text []byte
	cols [numColumns]colData
	// kids holds the list columns' children.
	kids [numColumns]colData
}

func (r *columnReader) fail(c int, format string, args ...any) {
	if r.err == nil {
		r.err = &DecodeError{Reason: fmt.Sprintf("column %s: %s", trajectorySchema.Field(c).Name, fmt.Sprintf(format, args...))}
	}
}

func (r *columnReader) differs(c, row int) {
	if r.err == nil {
		r.err = &ValidationError{Field: trajectorySchema.Field(c).Name,
			Reason: fmt.Sprintf("row %d differs from row 0 (a trajectory column holds one value on every row)", row)}
	}
}

// checkShape checks that every column has a row per step and no nulls,
// except created_at, which is null on every row or on none.
func (r *columnReader) checkShape() {
	for c := range numColumns {
		col := &r.cols[c]
		nulls := col.nullN()
		switch {
		case col.length != r.n:
			r.fail(c, "%d values in a batch of %d rows", col.length, r.n)
		case c == colCreatedAt && nulls != 0 && nulls != r.n:
			r.fail(c, "null on %d of %d rows (null on every row or on none)", nulls, r.n)
		case c != colCreatedAt && nulls != 0:
			r.fail(c, "%d nulls in a non-nullable column", nulls)
		}
	}
}

// readHeader reads the trajectory columns, which must repeat on every row.
func (r *columnReader) readHeader(t *Trajectory) {
	t.ID = r.constString(colID)
	t.Run = r.constString(colRun)
	t.Cycle = constFixed[int64](r, colCycle)
	t.Source = Source(r.constString(colSource))
	t.PolicyVersion = constFixed[int64](r, colPolicyVersion)
	t.Producer = r.constString(colProducer)
	t.Seq = constFixed[uint64](r, colSeq)
	t.Env = r.constString(colEnv)
	t.TaskID = r.constString(colTaskID)
	t.TaskType = r.constString(colTaskType)
	t.TaskSeed = constFixed[int64](r, colTaskSeed)
	t.Split = r.constString(colSplit)
	t.Instruction = r.constString(colInstruction)
	t.GroupID = r.constString(colGroupID)
	t.OutcomeReward = constFixed[float64](r, colOutcomeReward)
	t.Success = r.constBool(colSuccess)
	t.CreatedAt = r.createdAt()
	t.Swapped = r.constBool(colSwapped)
	t.DistinctStates = constFixed[int32](r, colDistinctStates)
	t.RepeatedVisits = constFixed[int32](r, colRepeatedVisits)
}

// readSteps reads the step columns.
func (r *columnReader) readSteps() []Step {
	r.checkStepNumbers()
	obs := r.strings(colObservation)
	admissible := r.admissible()
	numAdmissible := fixedValues[int32](r, colNumAdmissible)
	action := r.strings(colAction)
	actionIndex := fixedValues[int32](r, colActionIndex)
	behavior := fixedValues[float64](r, colBehaviorLogProb)
	reward := fixedValues[float64](r, colReward)
	dense := fixedValues[float64](r, colDenseReward)
	stateKey := fixedValues[uint64](r, colStateKey)
	tokenIDs := fixedLists[int32](r, colTokenIDs)
	tokenLogProbs := fixedLists[float32](r, colTokenLogProbs)
	if r.err != nil {
		return nil
	}
	steps := make([]Step, r.n)
	for i := range steps {
		steps[i] = Step{
			Observation: obs[i], Admissible: admissible[i], NumAdmissible: numAdmissible[i],
			Action: action[i], ActionIndex: actionIndex[i], BehaviorLogProb: behavior[i],
			Reward: reward[i], DenseReward: dense[i], StateKey: stateKey[i],
			TokenIDs: tokenIDs[i], TokenLogProbs: tokenLogProbs[i],
		}
	}
	return steps
}

// checkStepNumbers checks that the step column numbers the rows 0, 1, 2, ...
func (r *columnReader) checkStepNumbers() {
	for i, v := range fixedValues[int32](r, colStep) {
		if int(v) != i {
			r.fail(colStep, "row %d holds step %d (rows must be the steps in order)", i, v)
			return
		}
	}
}

// rawFixed returns the values buffer of a fixed-width array as bytes, after
// checking it holds all the array's values.
func (r *columnReader) rawFixed(c int, d *colData, size int) []byte {
	buf := d.bufs[1]
	begin, end := d.offset*size, (d.offset+d.length)*size
	if len(buf) < end {
		r.fail(c, "values buffer of %d bytes, want %d", len(buf), end)
		return nil
	}
	return buf[begin:end]
}

// fixedValues returns column c's values (aliasing the record's buffer).
func fixedValues[T arrow.FixedWidthType](r *columnReader, c int) []T {
	return fixedArrayValues[T](r, c, &r.cols[c])
}

// fixedArrayValues returns the values of fixed-width array d of column c.
func fixedArrayValues[T arrow.FixedWidthType](r *columnReader, c int, d *colData) []T {
	if r.err != nil {
		return nil
	}
	var zero T
	raw := r.rawFixed(c, d, int(unsafe.Sizeof(zero)))
	if r.err != nil {
		return nil
	}
	return arrow.GetData[T](raw)
}

// constFixed returns the value of fixed-width column c, which must be
// bit-for-bit equal on every row.
func constFixed[T arrow.FixedWidthType](r *columnReader, c int) T {
	var zero T
	if r.err != nil {
		return zero
	}
	size := int(unsafe.Sizeof(zero))
	raw := r.rawFixed(c, &r.cols[c], size)
	if r.err != nil {
		return zero
	}
	for i := 1; i < r.n; i++ {
		if !bytes.Equal(raw[i*size:(i+1)*size], raw[:size]) {
			r.differs(c, i)
			return zero
		}
	}
	return arrow.GetData[T](raw)[0]
}

// constBool returns the value of boolean column c, equal on every row.
func (r *columnReader) constBool(c int) bool {
	if r.err != nil {
		return false
	}
	d := &r.cols[c]
	bits := d.bufs[1]
	if need := int(bitutil.BytesForBits(int64(d.offset + r.n))); len(bits) < need {
		r.fail(c, "bitmap of %d bytes, want %d", len(bits), need)
		return false
	}
	first := bitutil.BitIsSet(bits, d.offset)
	for i := 1; i < r.n; i++ {
		if bitutil.BitIsSet(bits, d.offset+i) != first {
			r.differs(c, i)
			return false
		}
	}
	return first
}

// createdAt reads the created_at column: all nulls is the zero time.
func (r *columnReader) createdAt() time.Time {
	if r.err != nil || r.cols[colCreatedAt].nullN() == r.n {
		return time.Time{}
	}
	return time.Unix(0, int64(constFixed[arrow.Timestamp](r, colCreatedAt))).UTC()
}

// offsets returns the n+1 offsets of the string or list array d of column c,
// checked to be non-decreasing from ≥ 0 up to at most limit.
func (r *columnReader) offsets(c int, d *colData, limit int) []int32 {
	if r.err != nil {
		return nil
	}
	if d.length == 0 {
		return []int32{0}
	}
	buf := d.bufs[1]
	if need := (d.offset + d.length + 1) * 4; len(buf) < need {
		r.fail(c, "offsets buffer of %d bytes, want %d", len(buf), need)
		return nil
	}
	offs := arrow.GetData[int32](buf)[d.offset : d.offset+d.length+1]
	if offs[0] < 0 {
		r.fail(c, "negative offset %d", offs[0])
		return nil
	}
	for i := 1; i < len(offs); i++ {
		if offs[i] < offs[i-1] {
			r.fail(c, "offsets decrease at %d", i)
			return nil
		}
	}
	if int(offs[len(offs)-1]) > limit {
		r.fail(c, "offset %d beyond the %d values", offs[len(offs)-1], limit)
		return nil
	}
	return offs
}

// constString returns the value of string column c, equal on every row.
func (r *columnReader) constString(c int) string {
	d := &r.cols[c]
	data := d.bufs[2]
	offs := r.offsets(c, d, len(data))
	if r.err != nil {
		return ""
	}
	first := data[offs[0]:offs[1]]
	for i := 1; i < r.n; i++ {
		if !bytes.Equal(data[offs[i]:offs[i+1]], first) {
			r.differs(c, i)
			return ""
		}
	}
	return r.str(first)
}

// str returns a string of b's bytes: in one allocation for all strings
// of the trajectory, r.text, as long as it has room. The bytes of text
// are never written again once a string covers them (appending writes
// only past its length, and text is not reused), so the strings are
// immutable as strings must be.
func (r *columnReader) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(r.text)+len(b) > cap(r.text) {
		return string(b)
	}
	start := len(r.text)
	r.text = append(r.text, b...)
	return unsafe.String(&r.text[start], len(b))
}

// textBound estimates the bytes of the trajectory's strings: the first
// value of each trajectory column, every value of the step columns. It
// reads only what it can bounds-check; str copies whatever does not fit.
func (r *columnReader) textBound() int {
	n := 0
	for c := range numColumns {
		if trajectorySchema.Field(c).Type.ID() != arrow.STRING {
			continue
		}
		d := &r.cols[c]
		if c == colObservation || c == colAction {
			n += len(d.bufs[2])
			continue
		}
		if offs := d.bufs[1]; d.offset == 0 && len(offs) >= 8 {
			lo, hi := int32(binary.LittleEndian.Uint32(offs)), int32(binary.LittleEndian.Uint32(offs[4:]))
			if 0 <= lo && lo <= hi && int(hi) <= len(d.bufs[2]) {
				n += int(hi - lo)
			}
		}
	}
	if kid := r.cols[colAdmissible].child; kid != nil {
		n += len(kid.bufs[2])
	}
	return min(n, MaxMessageBytes)
}

// stringValues copies the strings of array d (of column c) into the
// trajectory's text and returns them as substrings of it.
func (r *columnReader) stringValues(c int, d *colData) []string {
	data := d.bufs[2]
	offs := r.offsets(c, d, len(data))
	if r.err != nil {
		return nil
	}
	base := offs[0]
	all := r.str(data[base:offs[len(offs)-1]])
	out := make([]string, len(offs)-1)
	for i := range out {
		out[i] = all[offs[i]-base : offs[i+1]-base]
	}
	return out
}

// strings returns the values of string column c.
func (r *columnReader) strings(c int) []string {
	return r.stringValues(c, &r.cols[c])
}

// listBounds returns the list offsets and the child data of list column c.
func (r *columnReader) listBounds(c int) ([]int32, *colData) {
	d := &r.cols[c]
	if d.children != 1 {
		r.fail(c, "%d child arrays, want 1", d.children)
		return nil, nil
	}
	child := d.child
	if child.nullN() != 0 {
		r.fail(c, "%d null list items", child.nullN())
	}
	return r.offsets(c, d, child.length), child
}

// admissible returns each row's admissible actions (nil for none).
func (r *columnReader) admissible() [][]string {
	offs, child := r.listBounds(colAdmissible)
	if r.err != nil {
		return nil
	}
	return splitLists(offs, r.stringValues(colAdmissible, child))
}

// fixedLists returns each row's values of the list column c (nil for none),
// copied out of the record.
func fixedLists[T arrow.FixedWidthType](r *columnReader, c int) [][]T {
	offs, child := r.listBounds(c)
	if r.err != nil {
		return nil
	}
	values := fixedArrayValues[T](r, c, child)
	if r.err != nil {
		return nil
	}
	return splitLists(offs, append([]T(nil), values...))
}

// splitLists cuts values into the lists given by offs. An empty list is
// nil; the others have capped capacity, so appending to one cannot
// overwrite the next.
func splitLists[T any](offs []int32, values []T) [][]T {
	lists := make([][]T, len(offs)-1)
	for i := range lists {
		lo, hi := offs[i], offs[i+1]
		if hi > lo {
			lists[i] = values[lo:hi:hi]
		}
	}
	return lists
}
