package learner

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/household"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
)

// expertDemos plays the household expert on n train tasks.
func expertDemos(t *testing.T, n int) []*schemas.Trajectory {
	t.Helper()
	env, err := envs.New("household", nil)
	if err != nil {
		t.Fatal(err)
	}
	expert, err := envs.NewExpertAgent(env)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := env.Tasks(envs.SplitTrain, n, 9)
	if err != nil {
		t.Fatal(err)
	}
	eps := make([]rollout.Episode, len(tasks))
	for i, task := range tasks {
		eps[i] = rollout.Episode{Task: task, Opts: policy.RolloutOptions{Seed: int64(i), ID: fmt.Sprintf("demo-%d", i)}}
	}
	trajs, err := rollout.All(context.Background(), env, rollout.AgentPlayer{Agent: expert}, eps, 2)
	if err != nil {
		t.Fatal(err)
	}
	return trajs
}

func TestSFTLearnsTheDemonstratedActions(t *testing.T) {
	demos := expertDemos(t, 64)
	train := func(seed int64) (*policy.Policy, SFTReport) {
		p, err := policy.New(policy.Config{})
		if err != nil {
			t.Fatal(err)
		}
		var epochs []SFTEpoch
		rep, err := SFT(context.Background(), p, demos, SFTConfig{MaxEpochs: 6, Seed: seed, OnEpoch: func(e SFTEpoch) { epochs = append(epochs, e) }})
		if err != nil {
			t.Fatal(err)
		}
		if len(epochs) != rep.Epochs || !epochs[len(epochs)-1].Last {
			t.Errorf("%d epochs reported for %d run, the last not marked", len(epochs), rep.Epochs)
		}
		return p, rep
	}
	p, rep := train(3)
	if !(rep.HeldOutLoss < rep.StartLoss/2) || rep.BestEpoch == 0 || rep.HeldOutDemos == 0 || rep.TrainDemos == 0 {
		t.Fatalf("SFT did not learn: %+v", rep)
	}
	// The kept weights are the best epoch's: their held-out loss is the
	// reported one.
	_, held, err := splitDemos(p, demos, 0.1, sftRand(3))
	if err != nil {
		t.Fatal(err)
	}
	if loss, _ := demoLoss(p, held); loss != rep.HeldOutLoss {
		t.Errorf("kept policy's held-out loss %v, reported %v", loss, rep.HeldOutLoss)
	}
	again, _ := train(3)
	a, _ := p.MarshalBinary()
	b, _ := again.MarshalBinary()
	if string(a) != string(b) {
		t.Error("SFT with the same seed trained another policy")
	}
}

func TestSFTRefusesTooFewDemosAndBadConfigs(t *testing.T) {
	p, err := policy.New(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	demos := expertDemos(t, 2)
	if _, err := SFT(context.Background(), p, demos[:1], SFTConfig{}); !errors.Is(err, ErrNoDemos) {
		t.Errorf("one demonstration: got %v, want ErrNoDemos", err)
	}
	for _, c := range []SFTConfig{{LR: -1}, {HeldOut: 1.5}, {MaxEpochs: -2}} {
		if _, err := SFT(context.Background(), p, demos, c); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: got %v, want ErrConfig", c, err)
		}
	}
	bad := *demos[0]
	bad.Steps = append([]schemas.Step(nil), bad.Steps...)
	bad.Steps[0].ActionIndex = 99
	if _, err := SFT(context.Background(), p, []*schemas.Trajectory{&bad, demos[1]}, SFTConfig{}); err == nil {
		t.Error("a demonstration whose action index is out of its list was accepted")
	}
}
