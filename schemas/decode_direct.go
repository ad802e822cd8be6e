package schemas

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
)

// The direct decode reads the columns of a trajectory message straight
// from its body, without Arrow's reader: no Arrow array, buffer or record
// object is built, and no buffer is copied. It takes only messages whose
// layout is exactly what this package writes (the messages
// locateRecordBatch finds: our schema message, one uncompressed record
// batch with our nodes and buffers, in order and inside the body, then
// the end of the stream) and, beyond that, only those on which Arrow's
// reader would not fail while it builds the record: every other message
// goes to the Arrow path, which decides it as it always has. On the
// messages it takes, the column reader then sees the same lengths, null
// counts and buffer bytes as on the Arrow path, so the two decode to the
// same trajectory or fail with the same error; FuzzDecodeDirect checks
// that on the seed corpora.

// fixedWidth is the byte width of the fixed-width types whose Arrow arrays
// slice their values buffer to the array's length (and so panic when it
// is short); booleans (a bitmap) are not sliced.
func fixedWidth(dt arrow.DataType) (int, bool) {
	switch dt.ID() {
	case arrow.INT32, arrow.FLOAT32:
		return 4, true
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.TIMESTAMP:
		return 8, true
	}
	return 0, false
}

// decodeDirect decodes b directly when it can (ok); otherwise the caller
// decodes it with Arrow's reader.
func decodeDirect(b []byte) (t *Trajectory, ok bool, err error) {
	d := decoders.Get().(*decoder)
	rb := &d.rb
	if rb.locate(b) != nil {
		decoders.Put(d)
		return nil, false, nil
	}
	// The message reader checks the record batch's metadata before Arrow
	// sees it; a failure there is the Arrow path's to report.
	if _, _, merr := checkMessageMeta(b[len(schemaMessage)+8 : rb.bodyStart]); merr != nil {
		decoders.Put(d)
		return nil, false, nil
	}
	defer func() {
		if p := recover(); p != nil {
			t, err = nil, &DecodeError{Reason: "corrupt Arrow data", Err: fmt.Errorf("%v", p)}
		}
		if cap(d.arena.slab) <= maxPooledArena {
			decoders.Put(d)
		}
	}()
	body := b[rb.bodyStart : rb.bodyStart+rb.bodyLen]
	if len(body) > 0 && uintptr(unsafe.Pointer(&body[0]))%8 != 0 {
		// Values are read in place as int32, float64, ...: give them the
		// alignment Arrow's writer gave them in the body.
		d.arena.reset(len(body))
		body = append(d.arena.Allocate(len(body))[:0], body...)
	}
	r := &d.cr
	*r = columnReader{n: rb.rows}
	if !r.loadRecordBatch(rb, body) {
		return nil, false, nil
	}
	if err := checkRows(rb.rows); err != nil {
		return nil, true, err
	}
	t, err = r.trajectory()
	r.release()
	return t, true, err
}

// release drops the reader's references to the message.
func (r *columnReader) release() { *r = columnReader{} }

// loadRecordBatch fills the reader's columns from the record batch rb,
// whose body is body, walking the nodes and buffers in the order Arrow
// writes (and reads) them. It returns false for a record batch on which
// Arrow's reader would fail while building the record: a negative or
// impossible length or null count, a column shorter than the batch, a
// fixed-width values buffer shorter than its array, string offsets short
// of their array or pointing past its bytes; and for a buffer not 8-byte
// aligned in the body.
func (r *columnReader) loadRecordBatch(rb *recordBatch, body []byte) bool {
	node, buf := 0, 0
	limit := 8*int64(len(body)) + 8 // no valid array is longer
	nextBuf := func() ([]byte, bool) {
		bb := rb.bufs[buf]
		buf++
		if bb.length == 0 {
			return nil, true
		}
		return body[bb.offset : bb.offset+bb.length], bb.offset%8 == 0
	}
	var load func(dt arrow.DataType, d *colData, kid *colData) bool
	load = func(dt arrow.DataType, d *colData, kid *colData) bool {
		fn := rb.nodes[node]
		node++
		if fn.length < 0 || fn.nulls < 0 || fn.length > limit {
			return false
		}
		*d = colData{length: int(fn.length), nulls: int(fn.nulls)}
		ok := true
		if d.nulls != 0 { // Arrow reads the validity bitmap only then
			d.bufs[0], ok = nextBuf()
		} else {
			buf++
		}
		if !ok {
			return false
		}
		switch dt := dt.(type) {
		case *arrow.ListType:
			if d.bufs[1], ok = nextBuf(); !ok {
				return false
			}
			d.children, d.child = 1, kid
			return load(dt.Elem(), kid, nil)
		case *arrow.StringType:
			if d.bufs[1], ok = nextBuf(); !ok {
				return false
			}
			if d.bufs[2], ok = nextBuf(); !ok {
				return false
			}
			if d.length >= 1 { // String.setData's checks
				offs, data := d.bufs[1], d.bufs[2]
				if len(offs)/4 < d.length+1 {
					return false
				}
				if int(int32(binary.LittleEndian.Uint32(offs[4*d.length:]))) > len(data) {
					return false
				}
			}
			return true
		default:
			if d.length == 0 { // Arrow skips the values buffer
				buf++
				return true
			}
			if d.bufs[1], ok = nextBuf(); !ok {
				return false
			}
			if size, sliced := fixedWidth(dt); sliced && len(d.bufs[1])/size < d.length {
				return false
			}
			return true
		}
	}
	for c, f := range trajectorySchema.Fields() {
		if !load(f.Type, &r.cols[c], &r.kids[c]) {
			return false
		}
		if r.cols[c].length < rb.rows { // array.NewRecord's check
			return false
		}
	}
	return true
}
