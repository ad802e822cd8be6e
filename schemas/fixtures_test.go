package schemas

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
)

// fixture is a small trajectory with every field set, mixing steps with and
// without admissible lists and tokens. It is the golden trajectory: change it
// only together with testdata/ (go test ./schemas -update).
func fixture() *Trajectory {
	return &Trajectory{
		ID:             "golden.explore.explorer-1.7",
		Run:            "golden",
		Cycle:          3,
		Source:         SourceExplore,
		PolicyVersion:  12,
		Producer:       "explorer-1",
		Seq:            7,
		Env:            "household",
		TaskID:         "household/train/1234",
		TaskType:       "pick_heat_then_place",
		TaskSeed:       -987654321,
		Split:          "train",
		Instruction:    "Your task is to: heat some egg and put it in the countertop.",
		GroupID:        "g-42",
		OutcomeReward:  1,
		Success:        true,
		CreatedAt:      time.Date(2026, 7, 1, 12, 30, 0, 123456789, time.UTC),
		Swapped:        true,
		DistinctStates: 2,
		RepeatedVisits: 1,
		Steps: []Step{
			{
				Observation:     "You are in the middle of a room. Looking quickly around you, you see a fridge 1 and a microwave 1.",
				Admissible:      []string{"go to fridge 1", "go to microwave 1", "look"},
				NumAdmissible:   3,
				Action:          "go to fridge 1",
				ActionIndex:     0,
				BehaviorLogProb: -1.0986122886681098,
				Reward:          0,
				DenseReward:     0.125,
				StateKey:        0xdeadbeef,
			},
			{
				Observation:     "You arrive at fridge 1. The fridge 1 is closed.",
				NumAdmissible:   4,
				Action:          "open fridge 1",
				ActionIndex:     2,
				BehaviorLogProb: -0.5,
				DenseReward:     -0.25,
				StateKey:        0xfeedface,
				TokenIDs:        []int32{101, 2023, 0},
				TokenLogProbs:   []float32{-0.25, -1.5, 0},
			},
			{
				Observation:     "You open the fridge 1. Ünïcödé: 卵 🥚",
				Admissible:      []string{"take egg 1 from fridge 1", "close fridge 1"},
				NumAdmissible:   5,
				Action:          "say something else",
				ActionIndex:     -1,
				BehaviorLogProb: 0,
				Reward:          1,
				DenseReward:     0.875,
				StateKey:        0xdeadbeef,
				TokenIDs:        []int32{7},
			},
		},
	}
}

// words returns n space-separated pseudo-words drawn deterministically from i.
func words(n, i int) string {
	vocab := strings.Fields("you are in the middle of a room looking quickly around see cabinet countertop " +
		"drawer fridge microwave sinkbasin stoveburner toaster garbagecan shelf egg apple mug plate knife on")
	out := make([]string, n)
	for k := range out {
		out[k] = vocab[(i*31+k*7)%len(vocab)]
	}
	return strings.Join(out, " ")
}

// realistic returns a trajectory of the size the pipeline carries: steps
// with ~40-word observations and 25 admissible actions of ~4 words each.
func realistic(steps int) *Trajectory {
	t := fixture()
	t.ID, t.Swapped, t.DistinctStates, t.RepeatedVisits = "bench.explore.explorer-1.7", false, 0, 0
	t.Steps = make([]Step, steps)
	for i := range t.Steps {
		adm := make([]string, 25)
		for j := range adm {
			adm[j] = words(4, i*25+j)
		}
		t.Steps[i] = Step{
			Observation: words(40, i), Admissible: adm, NumAdmissible: 25,
			Action: adm[i%25], ActionIndex: int32(i % 25), BehaviorLogProb: -math.Log(25),
			DenseReward: 0.01 * float64(i), StateKey: uint64(i * 2654435761),
		}
	}
	t.Steps[steps-1].Reward = 1
	return t
}

// rawEncode writes t as a stream without validating it, for building
// invalid messages.
func rawEncode(tb testing.TB, t *Trajectory) []byte {
	tb.Helper()
	b, err := writeStream([]*Trajectory{t}, 0)
	if err != nil {
		tb.Fatalf("writeStream: %v", err)
	}
	return b
}

// writeRecords writes records with the given schema as an IPC stream.
func writeRecords(tb testing.TB, schema *arrow.Schema, recs ...arrow.Record) []byte {
	tb.Helper()
	var buf strings.Builder
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			tb.Fatalf("write record: %v", err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatalf("close writer: %v", err)
	}
	return []byte(buf.String())
}

// describe prints a trajectory's differences-friendly summary for failures.
func describe(t *Trajectory) string {
	if t == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%+v", *t)
}

// buildRecord lays t out as a record batch in fresh scratch space.
func buildRecord(t *Trajectory) arrow.Record { return new(scratch).buildRecord(t) }
