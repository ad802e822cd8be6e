// Command curves trains a policy with in-process rollouts and prints its
// learning curve: eval success against the number of updates. It is the
// tool behind the learning curves quoted for the learner; it needs no NATS.
//
//	go run ./cmd/curves -env household -preset easy -algo grpo -updates 60
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/rspo-dev/rspo/envs"
	_ "github.com/rspo-dev/rspo/envs/household"
	_ "github.com/rspo-dev/rspo/envs/shop"
	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
)

type options struct {
	env, preset, algo, split string
	updates, b, n, every     int
	evalTasks, epochs        int
	seed                     int64
	lr                       float64
}

func parse() (options, error) {
	var o options
	flag.StringVar(&o.env, "env", "household", "environment: household or shop")
	flag.StringVar(&o.preset, "preset", "easy", "environment preset")
	flag.StringVar(&o.algo, "algo", "grpo", "grpo, ppo or gigpo")
	flag.StringVar(&o.split, "split", "heldout", "eval split, or heldout: train-split tasks of another seed, the training distribution of the preset")
	flag.IntVar(&o.updates, "updates", 60, "number of updates")
	flag.IntVar(&o.b, "b", 16, "tasks per update")
	flag.IntVar(&o.n, "n", 8, "rollouts per task")
	flag.IntVar(&o.every, "every", 10, "evaluate every this many updates")
	flag.IntVar(&o.evalTasks, "eval", 100, "eval episodes")
	flag.IntVar(&o.epochs, "epochs", 1, "optimisation epochs per update")
	flag.Int64Var(&o.seed, "seed", 1, "seed of the policy, the tasks and the sampling")
	flag.Float64Var(&o.lr, "lr", 0, "Adam learning rate (0: the learner's default)")
	flag.Parse()
	var errs []error
	if o.updates < 1 || o.b < 1 || o.n < 1 || o.every < 1 || o.evalTasks < 1 {
		errs = append(errs, errors.New("-updates, -b, -n, -every and -eval must be positive"))
	}
	return o, errors.Join(errs...)
}

func main() {
	o, err := parse()
	if err != nil {
		fmt.Fprintln(os.Stderr, "curves:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "curves:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	env, err := envs.New(o.env, map[string]string{"preset": o.preset})
	if err != nil {
		return err
	}
	train, err := env.Tasks(envs.SplitTrain, o.updates*o.b, o.seed)
	if err != nil {
		return err
	}
	eval, err := evalTasks(env, o)
	if err != nil {
		return err
	}
	p, err := policy.New(policy.Config{Seed: o.seed})
	if err != nil {
		return err
	}
	tr, err := learner.New(p, learner.Config{Algo: learner.Algo(o.algo), LR: o.lr, Epochs: o.epochs, Seed: o.seed})
	if err != nil {
		return err
	}
	fmt.Printf("# env=%s preset=%s algo=%s B=%d N=%d epochs=%d seed=%d eval=%d×%s\n", o.env, o.preset, o.algo, o.b, o.n, o.epochs, o.seed, o.evalTasks, o.split)
	fmt.Println("update\teval_success\ttrain_success\tall_fail\tentropy\tenv_steps\tseconds")
	start, steps := time.Now(), 0
	var last learner.UpdateStats
	for u := 0; u <= o.updates; u++ {
		if u%o.every == 0 || u == o.updates {
			rate, err := evaluate(ctx, env, eval, p, o)
			if err != nil {
				return err
			}
			fmt.Printf("%d\t%.3f\t%.3f\t%.2f\t%.3f\t%d\t%.1f\n", u, rate, last.SuccessOn, last.AllFailFracOn, last.EntropyOn, steps, time.Since(start).Seconds())
		}
		if u == o.updates {
			snap, err := p.MarshalBinary()
			if err != nil {
				return err
			}
			fmt.Printf("# snapshot %d bytes, %d parameters\n", len(snap), p.NumParams())
			return nil
		}
		batch, err := rollouts(ctx, env, train[u*o.b:(u+1)*o.b], p, o, u)
		if err != nil {
			return err
		}
		for _, t := range batch {
			steps += len(t.Steps)
		}
		if last, err = tr.Update(batch, nil); err != nil {
			return err
		}
	}
	return nil
}

func rollouts(ctx context.Context, env envs.Env, tasks []envs.Task, p *policy.Policy, o options, u int) ([]*schemas.Trajectory, error) {
	var out []*schemas.Trajectory
	for k, task := range tasks {
		for j := range o.n {
			t, err := policy.Rollout(ctx, env, task, p, policy.RolloutOptions{
				Seed: o.seed<<40 | int64(u)<<20 | int64(k)<<8 | int64(j), GroupID: fmt.Sprintf("%d/%s", u, task.ID)})
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// evaluate is the sampled success rate over the first evalTasks eval episodes.
func evaluate(ctx context.Context, env envs.Env, tasks []envs.Task, p *policy.Policy, o options) (float64, error) {
	rep, err := rollout.Evaluate(ctx, env, tasks, policy.NewAgent(p, false), rollout.EvalOptions{Seed: 7, Episodes: o.evalTasks})
	if err != nil {
		return 0, err
	}
	return rep.Overall.SuccessRate, nil
}

// evalTasks returns the eval split's tasks, or for "heldout" train tasks
// generated from a seed training never uses.
func evalTasks(env envs.Env, o options) ([]envs.Task, error) {
	if o.split == "heldout" {
		return env.Tasks(envs.SplitTrain, o.evalTasks, -o.seed-1000)
	}
	return env.Tasks(o.split, 0, 0)
}
