// Package swappertest makes explorer trajectories and malformed messages for
// the tests and benchmarks of the swapper, the buffer and the commands that
// run them.
package swappertest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/schemas"
)

// Env is the environment name of synthetic trajectories. It is registered
// (services refuse trajectories of unknown environments), but its episodes
// cannot be replayed: verification of a synthetic trajectory fails.
const Env = "synthetic"

func init() {
	envs.Register(Env, func(map[string]string) (envs.Env, error) { return syntheticEnv{}, nil })
}

// syntheticEnv is the registered stand-in of synthetic trajectories'
// environment: it has no tasks and refuses every reset.
type syntheticEnv struct{}

func (syntheticEnv) Name() string                                  { return Env }
func (syntheticEnv) Splits() []string                              { return []string{envs.SplitTrain} }
func (syntheticEnv) TaskTypes() []string                           { return []string{"synthetic"} }
func (syntheticEnv) Tasks(string, int, int64) ([]envs.Task, error) { return nil, nil }
func (syntheticEnv) Reset(t envs.Task) (envs.Episode, error) {
	return nil, fmt.Errorf("swappertest: synthetic task %s cannot be replayed", t.ID)
}

// Tasks is the number of distinct task ids synthetic trajectories use.
const Tasks = 16

// Explorer returns the i-th synthetic explorer trajectory of run and cycle
// with the given number of steps, before the swap: dense labels in Reward and
// DenseReward, state keys that revisit some states, an outcome drawn from i
// (about a third succeed). The same arguments give the same trajectory.
func Explorer(run string, cycle int64, i, steps int) *schemas.Trajectory {
	rng := rand.New(rand.NewPCG(uint64(i), uint64(cycle)))
	task := i % Tasks
	t := &schemas.Trajectory{
		ID:  schemas.TrajectoryID(run, schemas.SourceExplore, "explorer-0", uint64(cycle)<<32|uint64(i)),
		Run: run, Cycle: cycle, Source: schemas.SourceExplore, PolicyVersion: cycle,
		Producer: "explorer-0", Seq: uint64(i), Env: Env,
		TaskID: fmt.Sprintf("%s/train/%d", Env, task), TaskType: "synthetic", TaskSeed: int64(task),
		Split: "train", Instruction: "put a clean mug in the coffee machine",
		GroupID:   fmt.Sprintf("c%d/task%d", cycle, task),
		CreatedAt: time.Unix(1700000000+int64(i), 0).UTC(),
	}
	if rng.IntN(3) == 0 {
		t.OutcomeReward, t.Success = 1, true
	}
	states := 2 + rng.IntN(steps)
	for s := range steps {
		dense := math.Round(rng.Float64()*1000) / 1000
		t.Steps = append(t.Steps, schemas.Step{
			Observation:   "You are in the middle of a room. Looking quickly around you, you see a countertop " + strconv.Itoa(s) + ".",
			Admissible:    []string{"go to countertop 1", "go to cabinet 2", "open fridge 1", "take mug 1", "look", "inventory"},
			NumAdmissible: 6, Action: "look", ActionIndex: 4,
			BehaviorLogProb: -1 - rng.Float64(), Reward: dense, DenseReward: dense,
			StateKey: uint64(rng.IntN(states)),
		})
	}
	return t
}

// Encode encodes t and panics on error (a test bug).
func Encode(t *schemas.Trajectory) []byte {
	b, err := schemas.EncodeTrajectory(t)
	if err != nil {
		panic(fmt.Sprintf("swappertest: encode %s: %v", t.ID, err))
	}
	return b
}

// nanMarker is a reward value that appears nowhere else in an encoding.
const nanMarker = 0.7133713371337133

// WithNaNReward returns t's encoding with the first step's Reward set to NaN,
// a message the encoder itself refuses to write.
func WithNaNReward(t *schemas.Trajectory) []byte {
	c := t.Clone()
	c.Steps[0].Reward = nanMarker
	b := Encode(c)
	marker := binary.LittleEndian.AppendUint64(nil, math.Float64bits(nanMarker))
	if bytes.Count(b, marker) != 1 {
		panic("swappertest: reward marker not unique in the encoding")
	}
	i := bytes.Index(b, marker)
	binary.LittleEndian.PutUint64(b[i:], math.Float64bits(math.NaN()))
	return b
}

// WithSchemaVersion returns t's encoding with version in the schema
// metadata instead of schemas.SchemaVersion.
func WithSchemaVersion(t *schemas.Trajectory, version string) []byte {
	r, err := ipc.NewReader(bytes.NewReader(Encode(t)))
	if err != nil {
		panic(err)
	}
	defer r.Release()
	old := r.Schema()
	md := arrow.NewMetadata([]string{schemas.SchemaVersionKey}, []string{version})
	schema := arrow.NewSchema(old.Fields(), &md)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	for r.Next() {
		rec := array.NewRecord(schema, r.Record().Columns(), r.Record().NumRows())
		if err := w.Write(rec); err != nil {
			panic(err)
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}
