package producers

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"sync/atomic"
	"testing"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// remoteFeaturizer stands in for a featurizer behind an inference server
// (package llm's embeddings featurizer): the hash projection behind
// prm.BatchFeaturizer, counting its calls, failing while remoteDown is set.
type remoteFeaturizer struct{ *prm.HashProjection }

const remoteFeaturizerName = "producers-test-remote"

var (
	remoteDown  atomic.Bool
	remoteCalls atomic.Int64
)

func init() {
	prm.RegisterFeaturizer(remoteFeaturizerName, func(json.RawMessage) (prm.Featurizer, error) {
		return remoteFeaturizer{prm.DefaultFeaturizer()}, nil
	})
}

func (f remoteFeaturizer) Spec() prm.FeaturizerSpec {
	return prm.FeaturizerSpec{Name: remoteFeaturizerName, Params: json.RawMessage(`{}`)}
}

func (f remoteFeaturizer) FeaturesBatch(_ context.Context, steps []prm.StepText, dst []float32) error {
	remoteCalls.Add(1)
	if remoteDown.Load() {
		return errors.New("test: the embeddings server is down")
	}
	d := f.Dim()
	for i, s := range steps {
		f.HashProjection.Features(s.Instruction, s.Observation, s.Action, dst[i*d:(i+1)*d])
	}
	return nil
}

func (f remoteFeaturizer) Features(instruction, observation, action string, dst []float32) {
	if err := f.FeaturesBatch(context.Background(), []prm.StepText{{Instruction: instruction, Observation: observation, Action: action}}, dst); err != nil {
		for i := range dst[:f.Dim()] {
			dst[i] = float32(math.NaN())
		}
	}
}

// A tilted explorer whose PRM reads a remote featurizer scores each
// state's actions in one call, and fails its cycle — publishing nothing —
// when the featurizer fails, instead of exploring untilted.
func TestExplorerTiltsThroughABatchFeaturizer(t *testing.T) {
	m, err := prm.New(remoteFeaturizer{prm.DefaultFeaturizer()}, prm.ModelConfig{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	m.Version = 1
	ctx, js := setup(t)
	b, err := prm.EncodeSnapshot(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := streams.PutSnapshot(ctx, js, streams.BucketPRM, streams.PRMObject(testRun, 1), b); err != nil {
		t.Fatal(err)
	}
	x, err := NewExplorer(js, ExplorerConfig{Run: testRun, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	plan := schemas.CyclePlan{Env: "household", EnvOptions: easy, Tasks: trainTasks(t, 2), Updates: 1, Seed: 9, PRMVersion: 1, ExploreSettings: schemas.ExploreSettings{GroupSize: 2, Collect: 2, Mode: schemas.ExplorerPRM, Tilt: 3}}
	raw, _ := json.Marshal(plan)
	e := schemas.Event{Type: schemas.EventCycleStarted, Run: testRun, Cycle: 1, Config: raw}
	remoteCalls.Store(0)
	res, err := x.Explore(ctx, e, plan)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Shaped || res.Published != 4 {
		t.Fatalf("got %+v, want 4 shaped trajectories", res)
	}
	// One call per state for the tilt, and one for the final scoring.
	if n := remoteCalls.Load(); n != res.EnvSteps+1 {
		t.Errorf("%d featurizer calls for %d env steps, want one per state and one for the scoring", n, res.EnvSteps)
	}

	remoteDown.Store(true)
	defer remoteDown.Store(false)
	e.Cycle, plan.Seed = 2, 10
	_, err = x.Explore(ctx, e, plan)
	var rej *streams.RejectError
	if !errors.Is(err, prm.ErrFeaturizer) || errors.As(err, &rej) {
		t.Fatalf("got %v, want the featurizer's failure, not a rejection (a retry may succeed)", err)
	}
	if trajs := collect(t, ctx, js, "traj.explore"); len(trajs) != 4 {
		t.Errorf("%d explorer trajectories stored, want the first cycle's 4 only", len(trajs))
	}
}
