package schemas

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
)

// ErrNotPatchable means PatchLabels cannot rewrite a message in place; the
// caller encodes the trajectory instead (EncodeTrajectory).
var ErrNotPatchable = errors.New("schemas: message cannot be patched")

// PatchLabels returns a copy of msg, the Arrow IPC message of a trajectory,
// with the label columns overwritten by t's values: every step's reward and
// dense_reward, and the swapped, distinct_states and repeated_visits
// columns. Every other byte is copied as it is. The result is a standard
// Arrow IPC stream of the same schema, as long as msg; and when msg was
// written by EncodeTrajectory, the result is byte for byte what
// EncodeTrajectory writes for the relabelled trajectory.
//
// msg must have been decoded and validated by the caller (DecodeTrajectory)
// and t must be that trajectory with new labels: PatchLabels reads nothing
// of t but its labels and its number of steps, and trusts that every other
// field equals msg's. It checks t's labels as Validate does.
//
// It patches only messages it can locate the columns of exactly, and
// returns an error wrapping ErrNotPatchable for any other: a schema message
// other than the one this package writes, anything but one record batch
// followed by the end-of-stream marker, a compressed body, buffers out of
// the body or out of the order Arrow writes them in (so that no two can
// overlap), a label column with nulls or a length other than the steps'.
// Invalid labels are a *ValidationError.
func PatchLabels(msg []byte, t *Trajectory) ([]byte, error) {
	if t == nil {
		return nil, &ValidationError{Field: "trajectory", Reason: "nil"}
	}
	if err := checkLabels(t); err != nil {
		return nil, err
	}
	rb, err := locateRecordBatch(msg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotPatchable, err)
	}
	n := len(t.Steps)
	if rb.rows != n {
		return nil, fmt.Errorf("%w: the record batch has %d rows, the trajectory %d steps", ErrNotPatchable, rb.rows, n)
	}
	var spans [numColumns]span
	for _, col := range labelColumns {
		if spans[col], err = rb.values(col); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotPatchable, err)
		}
	}
	out := bytes.Clone(msg)
	at := func(col int) []byte { return out[spans[col].start:spans[col].end] }
	reward, dense := at(colReward), at(colDenseReward)
	for i := range t.Steps {
		binary.NativeEndian.PutUint64(reward[8*i:], math.Float64bits(t.Steps[i].Reward))
		binary.NativeEndian.PutUint64(dense[8*i:], math.Float64bits(t.Steps[i].DenseReward))
	}
	distinct, repeated := at(colDistinctStates), at(colRepeatedVisits)
	for i := range n {
		binary.NativeEndian.PutUint32(distinct[4*i:], uint32(t.DistinctStates))
		binary.NativeEndian.PutUint32(repeated[4*i:], uint32(t.RepeatedVisits))
	}
	swapped := at(colSwapped)
	clear(swapped) // as the encoder writes it: the padding bits clear
	bitutil.SetBitsTo(swapped, 0, int64(n), t.Swapped)
	return out, nil
}

// labelColumns are the columns PatchLabels overwrites.
var labelColumns = [...]int{colReward, colDenseReward, colSwapped, colDistinctStates, colRepeatedVisits}

// checkLabels checks the labels PatchLabels writes, as Validate would.
func checkLabels(t *Trajectory) error {
	if err := t.validateCounts(); err != nil {
		return err
	}
	for i := range t.Steps {
		s := &t.Steps[i]
		switch {
		case !isFinite(s.Reward):
			return stepError(i, "reward", fmt.Sprintf("%v is not finite", s.Reward))
		case !isFinite(s.DenseReward):
			return stepError(i, "dense_reward", fmt.Sprintf("%v is not finite", s.DenseReward))
		}
	}
	return nil
}

// Slots of the RecordBatch table (Message.fbs) and sizes of its structs.
const (
	messageHeaderRecordBatch = 3

	slotRecordBatchLength      = 0
	slotRecordBatchNodes       = 1
	slotRecordBatchBuffers     = 2
	slotRecordBatchCompression = 3
	slotRecordBatchVariadic    = 4

	fieldNodeBytes = 16 // length, null_count: int64
	bufferBytes    = 16 // offset, length: int64
)

// recordBatch is the located body of a stream's only record batch.
type recordBatch struct {
	// bodyStart and bodyLen place the message body in the stream.
	bodyStart, bodyLen int64
	rows               int
	nodes              []fieldNode
	bufs               []bodyBuffer
}

type fieldNode struct{ length, nulls int64 }

type bodyBuffer struct{ offset, length int64 }

// span is a range of bytes of the stream.
type span struct{ start, end int64 }

// columnLayout says where each column's field node and value buffer are in
// a record batch of trajectorySchema, which Arrow writes depth first: a
// node per array (list children after their list), and per array its
// validity buffer, then its offsets (strings, lists) and values (strings,
// fixed width) — a list's values are its child.
var columnLayout, numNodes, numBuffers = func() (layout [numColumns]struct{ node, values int }, nodes, bufs int) {
	var walk func(dt arrow.DataType) (valuesAt int)
	walk = func(dt arrow.DataType) int {
		nodes++
		switch dt := dt.(type) {
		case *arrow.ListType:
			bufs += 2 // validity, offsets
			walk(dt.Elem())
			return -1
		case *arrow.StringType:
			bufs += 3 // validity, offsets, bytes
			return bufs - 1
		case arrow.FixedWidthDataType:
			bufs += 2 // validity, values
			return bufs - 1
		}
		panic(fmt.Sprintf("schemas: no layout for column type %s", dt))
	}
	for i, f := range trajectorySchema.Fields() {
		layout[i].node = nodes
		layout[i].values = walk(f.Type)
	}
	return layout, nodes, bufs
}()

// values returns where in the stream the value buffer of the fixed-width
// column col is, exactly as long as its rows need, after checking the column's node: a length of
// rows and no nulls.
func (rb *recordBatch) values(col int) (span, error) {
	name := trajectorySchema.Field(col).Name
	node := rb.nodes[columnLayout[col].node]
	if node.length != int64(rb.rows) || node.nulls != 0 {
		return span{}, fmt.Errorf("column %s has %d rows and %d nulls, want %d rows and none", name, node.length, node.nulls, rb.rows)
	}
	var need int64
	switch dt := trajectorySchema.Field(col).Type.(type) {
	case *arrow.BooleanType:
		need = bitutil.BytesForBits(int64(rb.rows))
	case arrow.FixedWidthDataType:
		need = int64(rb.rows) * int64(dt.BitWidth()/8)
	default:
		return span{}, fmt.Errorf("column %s is not fixed width", name)
	}
	b := rb.bufs[columnLayout[col].values]
	if b.length < need {
		return span{}, fmt.Errorf("column %s has %d value bytes, want %d", name, b.length, need)
	}
	start := rb.bodyStart + b.offset
	return span{start, start + need}, nil
}

// locateRecordBatch finds the record batch of msg, which must be this
// package's schema message, one uncompressed record batch whose nodes and
// buffers have trajectorySchema's layout, and the end-of-stream marker.
func locateRecordBatch(msg []byte) (*recordBatch, error) {
	rb := &recordBatch{}
	if err := rb.locate(msg); err != nil {
		return nil, err
	}
	return rb, nil
}

// locate is locateRecordBatch into rb, reusing its slices.
func (rb *recordBatch) locate(msg []byte) error {
	if len(msg) < len(schemaMessage) || string(msg[:len(schemaMessage)]) != string(schemaMessage) {
		return errors.New("not this package's schema message")
	}
	rest := msg[len(schemaMessage):]
	if len(rest) < 8 || binary.LittleEndian.Uint32(rest) != continuationMarker {
		return errors.New("no record batch message after the schema")
	}
	metaLen := int64(int32(binary.LittleEndian.Uint32(rest[4:])))
	rest = rest[8:]
	if metaLen <= 0 || metaLen > int64(len(rest)) {
		return fmt.Errorf("record batch metadata of %d bytes, %d left", metaLen, len(rest))
	}
	meta := flatbuf(rest[:metaLen])
	rest = rest[metaLen:]
	bodyLen, err := rb.readMeta(meta)
	if err != nil {
		return err
	}
	if bodyLen < 0 || bodyLen > int64(len(rest)) {
		return fmt.Errorf("record batch body of %d bytes, %d left", bodyLen, len(rest))
	}
	rb.bodyStart, rb.bodyLen = int64(len(msg)-len(rest)), bodyLen
	if tail := rest[bodyLen:]; string(tail) != string(eosMarker) {
		return errors.New("the record batch is not followed by the end-of-stream marker and nothing else")
	}
	// Buffers in order, each after the one before it, all in the body: no
	// write to one can change another.
	var end int64
	for i, b := range rb.bufs {
		if b.offset < end || b.length < 0 || b.length > bodyLen || b.offset > bodyLen-b.length {
			return fmt.Errorf("buffer %d (offset %d, length %d) out of order or out of the %d-byte body", i, b.offset, b.length, bodyLen)
		}
		end = b.offset + b.length
	}
	return nil
}

// readMeta reads the metadata of a record batch message into rb: its
// rows, field nodes and buffers; it returns the body length.
func (rb *recordBatch) readMeta(f flatbuf) (int64, error) {
	root, err := f.indirect(0)
	if err != nil {
		return 0, err
	}
	msg, err := f.table(root)
	if err != nil {
		return 0, err
	}
	typ, err := f.uint8Field(msg, slotMessageHeaderType)
	if err != nil {
		return 0, err
	}
	if typ != messageHeaderRecordBatch {
		return 0, fmt.Errorf("message of type %d, not a record batch", typ)
	}
	bodyLen, err := f.int64Field(msg, slotMessageBodyLength)
	if err != nil {
		return 0, err
	}
	batch, ok, err := f.subTable(msg, slotMessageHeader)
	if err != nil || !ok {
		return 0, errors.Join(errFlatbuf, err)
	}
	if f.field(batch, slotRecordBatchCompression) != 0 {
		return 0, errors.New("a compressed body")
	}
	if _, n, err := f.vector(batch, slotRecordBatchVariadic, 8); err != nil || n != 0 {
		return 0, errors.Join(errors.New("variadic buffer counts (trajectory columns have none)"), err)
	}
	rows, err := f.int64Field(batch, slotRecordBatchLength)
	if err != nil {
		return 0, err
	}
	if rows < 0 || rows > MaxSteps {
		return 0, fmt.Errorf("%d rows, at most %d", rows, MaxSteps)
	}
	rb.rows = int(rows)
	start, n, err := f.vector(batch, slotRecordBatchNodes, fieldNodeBytes)
	if err != nil {
		return 0, err
	}
	if n != numNodes {
		return 0, fmt.Errorf("%d field nodes, the trajectory schema has %d", n, numNodes)
	}
	rb.nodes = slices.Grow(rb.nodes[:0], n)[:n]
	for i := range rb.nodes {
		p := start + i*fieldNodeBytes
		rb.nodes[i] = fieldNode{int64(binary.LittleEndian.Uint64(f[p:])), int64(binary.LittleEndian.Uint64(f[p+8:]))}
	}
	if start, n, err = f.vector(batch, slotRecordBatchBuffers, bufferBytes); err != nil {
		return 0, err
	}
	if n != numBuffers {
		return 0, fmt.Errorf("%d buffers, the trajectory schema has %d", n, numBuffers)
	}
	rb.bufs = slices.Grow(rb.bufs[:0], n)[:n]
	for i := range rb.bufs {
		p := start + i*bufferBytes
		rb.bufs[i] = bodyBuffer{int64(binary.LittleEndian.Uint64(f[p:])), int64(binary.LittleEndian.Uint64(f[p+8:]))}
	}
	return bodyLen, nil
}
