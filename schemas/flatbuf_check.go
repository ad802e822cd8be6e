package schemas

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Arrow IPC message metadata is a FlatBuffer, and Arrow's Go reader trusts
// it: a vector length is used to size an allocation before anything checks
// it against the bytes, and nested fields are followed without a bound. A
// corrupt schema message can so exhaust memory or the stack, which no
// recover catches. checkMessageMeta walks the parts of a message the
// reader will expand — for a schema: the fields, their children, type ids
// and key/value metadata — and rejects any vector longer than the bytes
// that hold it, and schemas larger or deeper than any trajectory schema
// could be, before the metadata reaches Arrow. Counting along every path
// also bounds schemas whose parts are shared (a FlatBuffer is a DAG).

// Limits on a schema message; ours is about 2 KiB with 35 fields at depth 2.
const (
	maxSchemaMetaBytes = 64 << 10
	maxSchemaElements  = 4096 // fields, key/values and type ids, along every path
	maxSchemaDepth     = 16
)

// Slots (field numbers) of the Arrow FlatBuffer tables we walk (Message.fbs,
// Schema.fbs).
const (
	slotMessageHeaderType = 1
	slotMessageHeader     = 2
	slotMessageBodyLength = 3

	slotSchemaFields   = 1
	slotSchemaMetadata = 2

	slotFieldTypeType   = 2
	slotFieldType       = 3
	slotFieldChildren   = 5
	slotFieldMetadata   = 6
	slotUnionTypeIDs    = 1
	messageHeaderSchema = 1
	messageHeaderDict   = 2
	typeUnion           = 14
)

var errFlatbuf = errors.New("malformed message metadata")

// fbTable is a FlatBuffer table: its position and its vtable's.
type fbTable struct {
	pos, vtable, vtableLen int
}

// flatbuf reads a FlatBuffer, checking every offset against its bytes.
type flatbuf []byte

func (f flatbuf) uint32At(pos int) (int, error) {
	if pos < 0 || pos > len(f)-4 {
		return 0, fmt.Errorf("%w: offset %d out of %d bytes", errFlatbuf, pos, len(f))
	}
	return int(binary.LittleEndian.Uint32(f[pos:])), nil
}

// indirect follows the unsigned offset stored at pos.
func (f flatbuf) indirect(pos int) (int, error) {
	off, err := f.uint32At(pos)
	if err != nil {
		return 0, err
	}
	return pos + off, nil
}

// table returns the table at pos, with its vtable checked to lie in f.
func (f flatbuf) table(pos int) (fbTable, error) {
	soff, err := f.uint32At(pos)
	if err != nil {
		return fbTable{}, err
	}
	vt := pos - int(int32(uint32(soff)))
	if vt < 0 || vt > len(f)-4 {
		return fbTable{}, fmt.Errorf("%w: vtable at %d out of %d bytes", errFlatbuf, vt, len(f))
	}
	n := int(binary.LittleEndian.Uint16(f[vt:]))
	if n < 4 || vt+n > len(f) {
		return fbTable{}, fmt.Errorf("%w: vtable of %d bytes at %d", errFlatbuf, n, vt)
	}
	return fbTable{pos: pos, vtable: vt, vtableLen: n}, nil
}

// field returns the position of slot's value in t, or 0 if it is absent.
func (f flatbuf) field(t fbTable, slot int) int {
	voff := 4 + 2*slot
	if voff+2 > t.vtableLen {
		return 0
	}
	if o := int(binary.LittleEndian.Uint16(f[t.vtable+voff:])); o != 0 {
		return t.pos + o
	}
	return 0
}

func (f flatbuf) uint8Field(t fbTable, slot int) (int, error) {
	p := f.field(t, slot)
	if p == 0 {
		return 0, nil
	}
	if p >= len(f) {
		return 0, fmt.Errorf("%w: field at %d out of %d bytes", errFlatbuf, p, len(f))
	}
	return int(f[p]), nil
}

func (f flatbuf) int64Field(t fbTable, slot int) (int64, error) {
	p := f.field(t, slot)
	if p == 0 {
		return 0, nil
	}
	if p > len(f)-8 {
		return 0, fmt.Errorf("%w: field at %d out of %d bytes", errFlatbuf, p, len(f))
	}
	return int64(binary.LittleEndian.Uint64(f[p:])), nil
}

// subTable returns the table referenced by slot of t; ok is false if absent.
func (f flatbuf) subTable(t fbTable, slot int) (sub fbTable, ok bool, err error) {
	p := f.field(t, slot)
	if p == 0 {
		return fbTable{}, false, nil
	}
	pos, err := f.indirect(p)
	if err != nil {
		return fbTable{}, false, err
	}
	sub, err = f.table(pos)
	return sub, err == nil, err
}

// vector returns the start and length of the vector in slot of t, checked
// to fit in f with elements of elemSize bytes.
func (f flatbuf) vector(t fbTable, slot, elemSize int) (start, n int, err error) {
	p := f.field(t, slot)
	if p == 0 {
		return 0, 0, nil
	}
	vp, err := f.indirect(p)
	if err != nil {
		return 0, 0, err
	}
	if n, err = f.uint32At(vp); err != nil {
		return 0, 0, err
	}
	start = vp + 4
	if n > (len(f)-start)/elemSize {
		return 0, 0, fmt.Errorf("%w: vector of %d elements at %d exceeds %d bytes", errFlatbuf, n, vp, len(f))
	}
	return start, n, nil
}

// tables calls each for the tables of the vector of tables in slot of t.
func (f flatbuf) tables(t fbTable, slot int, each func(fbTable) error) error {
	start, n, err := f.vector(t, slot, 4)
	if err != nil {
		return err
	}
	for i := range n {
		pos, err := f.indirect(start + 4*i)
		if err != nil {
			return err
		}
		sub, err := f.table(pos)
		if err != nil {
			return err
		}
		if err := each(sub); err != nil {
			return err
		}
	}
	return nil
}

// checkMessageMeta checks the metadata of one IPC message (see above) and
// returns its type and body length. Dictionary batches are refused: no
// trajectory stream has them.
func checkMessageMeta(meta []byte) (headerType int, bodyLen int64, err error) {
	f := flatbuf(meta)
	root, err := f.indirect(0)
	if err != nil {
		return 0, 0, err
	}
	msg, err := f.table(root)
	if err != nil {
		return 0, 0, err
	}
	if headerType, err = f.uint8Field(msg, slotMessageHeaderType); err != nil {
		return 0, 0, err
	}
	if bodyLen, err = f.int64Field(msg, slotMessageBodyLength); err != nil {
		return 0, 0, err
	}
	switch headerType {
	case messageHeaderDict:
		return 0, 0, errors.New("a dictionary batch (trajectory streams have none)")
	case messageHeaderSchema:
		if len(meta) > maxSchemaMetaBytes {
			return 0, 0, fmt.Errorf("%w: schema metadata of %d bytes, at most %d", errFlatbuf, len(meta), maxSchemaMetaBytes)
		}
		schema, ok, err := f.subTable(msg, slotMessageHeader)
		if err != nil || !ok {
			return 0, 0, errors.Join(errFlatbuf, err)
		}
		err = (&schemaCheck{f: f}).schema(schema)
		return headerType, bodyLen, err
	}
	return headerType, bodyLen, nil
}

// schemaCheck walks a Schema table counting the elements it expands.
type schemaCheck struct {
	f     flatbuf
	elems int
}

// count charges n elements to the budget.
func (c *schemaCheck) count(n int) error {
	c.elems += n
	if c.elems > maxSchemaElements {
		return fmt.Errorf("%w: schema expands to more than %d fields, key/values and type ids", errFlatbuf, maxSchemaElements)
	}
	return nil
}

func (c *schemaCheck) schema(t fbTable) error {
	if err := c.keyValues(t, slotSchemaMetadata); err != nil {
		return err
	}
	return c.f.tables(t, slotSchemaFields, func(field fbTable) error { return c.field(field, 1) })
}

func (c *schemaCheck) field(t fbTable, depth int) error {
	if depth > maxSchemaDepth {
		return fmt.Errorf("%w: schema nested deeper than %d", errFlatbuf, maxSchemaDepth)
	}
	if err := c.count(1); err != nil {
		return err
	}
	if err := c.keyValues(t, slotFieldMetadata); err != nil {
		return err
	}
	if err := c.unionTypeIDs(t); err != nil {
		return err
	}
	return c.f.tables(t, slotFieldChildren, func(child fbTable) error { return c.field(child, depth+1) })
}

// unionTypeIDs checks the type-id vector of a union field's type.
func (c *schemaCheck) unionTypeIDs(t fbTable) error {
	typ, err := c.f.uint8Field(t, slotFieldTypeType)
	if err != nil || typ != typeUnion {
		return err
	}
	union, ok, err := c.f.subTable(t, slotFieldType)
	if err != nil || !ok {
		return err
	}
	_, n, err := c.f.vector(union, slotUnionTypeIDs, 4)
	if err != nil {
		return err
	}
	return c.count(n)
}

// keyValues checks a vector of KeyValue tables (their strings are sliced,
// with bounds checks, by the reader itself).
func (c *schemaCheck) keyValues(t fbTable, slot int) error {
	return c.f.tables(t, slot, func(fbTable) error { return c.count(1) })
}
