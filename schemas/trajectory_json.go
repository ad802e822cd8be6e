package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// The JSON form of trajectories writes the 64-bit integers that can exceed
// 2^53 — a trajectory's task_seed and seq, a step's state_key — as
// decimal strings (the ",string" of their tags), as protobuf's JSON
// mapping does, so jq and JavaScript read them exactly. Decoding takes a
// string or a number, so JSON written before the change still reads. (Trajectories travel as Arrow, never as
// JSON: this form is for people and tools.)

// UnmarshalJSON reads a trajectory whose task_seed and seq are strings or
// numbers.
func (t *Trajectory) UnmarshalJSON(b []byte) error {
	type plain Trajectory
	v := struct {
		*plain
		Seq      jsonUint64 `json:"seq"`
		TaskSeed jsonInt64  `json:"task_seed"`
	}{(*plain)(t), jsonUint64(t.Seq), jsonInt64(t.TaskSeed)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	t.Seq, t.TaskSeed = uint64(v.Seq), int64(v.TaskSeed)
	return nil
}

// UnmarshalJSON reads a step whose state_key is a string or a number.
func (s *Step) UnmarshalJSON(b []byte) error {
	type plain Step
	v := struct {
		*plain
		StateKey jsonUint64 `json:"state_key"`
	}{(*plain)(s), jsonUint64(s.StateKey)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	s.StateKey = uint64(v.StateKey)
	return nil
}

// jsonInt64 and jsonUint64 decode a JSON integer given as a number or as
// a decimal string.
type (
	jsonInt64  int64
	jsonUint64 uint64
)

func (n *jsonInt64) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	v, err := strconv.ParseInt(string(unquoteNumber(b)), 10, 64)
	if err != nil {
		return fmt.Errorf("schemas: %s is not a 64-bit integer", b)
	}
	*n = jsonInt64(v)
	return nil
}

func (n *jsonUint64) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	v, err := strconv.ParseUint(string(unquoteNumber(b)), 10, 64)
	if err != nil {
		return fmt.Errorf("schemas: %s is not an unsigned 64-bit integer", b)
	}
	*n = jsonUint64(v)
	return nil
}

// unquoteNumber strips the quotes of a number written as a JSON string.
func unquoteNumber(b []byte) []byte {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		return b[1 : len(b)-1]
	}
	return bytes.TrimSpace(b)
}
