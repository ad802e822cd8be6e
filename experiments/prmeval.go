package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
)

// PRMReport is what the page shows of a PRM source: how well the trained
// PRM separates successes from failures on held-out trajectories of its
// own sources, and on the runs it is meant for.
type PRMReport struct {
	Name   string          `json:"name"`
	Note   string          `json:"note,omitempty"`
	Trajs  int             `json:"trajectories"`
	Succ   int             `json:"successes"`
	AUC    float64         `json:"heldout_auc"`
	Target *prm.Evaluation `json:"target,omitempty"`
	// TargetVariants names the variants the target figures come from.
	TargetVariants []string `json:"target_variants,omitempty"`
	// Steer is how far the PRM steers the untrained policy on the suite's
	// setting: its success alone and tilted by the PRM.
	Steer *Steering `json:"steer,omitempty"`
}

// Steering is the success of the untrained policy (the start of every
// run) on SteerEpisodes train tasks of the suite's environment, alone and
// tilted by a PRM at λ = SteerLambda: `rspo eval --policy untrained
// --tilt-prm FILE --tilt λ --split train`. It measures what a tilted explorer gets out of
// the PRM before any training.
type Steering struct {
	Lambda   float64 `json:"lambda"`
	Episodes int     `json:"episodes"`
	Alone    float64 `json:"alone"`
	Tilted   float64 `json:"tilted"`
	// RandomPRM is the same with an untrained random PRM (the control).
	RandomPRM float64 `json:"random_prm"`
}

// SteerLambda and SteerEpisodes fix the steering measurement.
const (
	SteerLambda   = 10
	SteerEpisodes = 512
)

// steering measures Steering for m on the suite's base environment.
func (r *Runner) steering(ctx context.Context, s *Suite, m *prm.Model) (*Steering, error) {
	cfg, err := layered([]json.RawMessage{s.Base})
	if err != nil {
		return nil, err
	}
	env, err := envs.New(cfg.Env, cfg.EnvOptions)
	if err != nil {
		return nil, err
	}
	tasks, err := env.Tasks(envs.SplitTrain, SteerEpisodes, 1)
	if err != nil {
		return nil, err
	}
	success := func(tilt *prm.Model) (float64, error) {
		p, err := policy.New(policy.Config{})
		if err != nil {
			return 0, err
		}
		agent := policy.NewAgent(p, false)
		if tilt != nil {
			agent.WithTilt(tilt, SteerLambda)
		}
		rep, err := rollout.Evaluate(ctx, env, tasks, agent, rollout.EvalOptions{Episodes: len(tasks), Seed: 1})
		return rep.Overall.SuccessRate, err
	}
	st := &Steering{Lambda: SteerLambda, Episodes: len(tasks)}
	if st.Alone, err = success(nil); err != nil {
		return nil, err
	}
	if st.Tilted, err = success(m); err != nil {
		return nil, err
	}
	if st.RandomPRM, err = success(prm.Random(1)); err != nil {
		return nil, err
	}
	return st, nil
}

// EvaluatePRMs scores each trained PRM source of s on the recorded runs of
// its EvaluateOn variants (finished runs only) and returns a report per
// trained source. Evaluations are cached beside the PRM file.
func (r *Runner) EvaluatePRMs(ctx context.Context, s *Suite) ([]PRMReport, error) {
	names := make([]string, 0, len(s.PRMSources))
	for n := range s.PRMSources {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []PRMReport
	for _, name := range names {
		rep, ok, err := r.evaluatePRM(ctx, s, name)
		if err != nil {
			return out, err
		}
		if ok {
			out = append(out, rep)
		}
	}
	return out, nil
}

func (r *Runner) evaluatePRM(ctx context.Context, s *Suite, name string) (PRMReport, bool, error) {
	src := s.PRMSources[name]
	path := r.PRMFile(s.Name, name)
	base := strings.TrimSuffix(path, ".rspo")
	var train prm.TrainReport
	if err := readJSONFile(base+".json", &train); errors.Is(err, os.ErrNotExist) {
		return PRMReport{}, false, nil
	} else if err != nil {
		return PRMReport{}, false, err
	}
	rep := PRMReport{Name: name, Note: src.Note, Trajs: train.Trajectories, Succ: train.Successes, AUC: train.HeldoutEval.AUC,
		TargetVariants: src.EvaluateOn}
	m, err := prm.LoadFile(path)
	if err != nil {
		return rep, false, fmt.Errorf("experiments: prm %s: %w", name, err)
	}
	var steer Steering
	if err := readJSONFile(base+"-steer.json", &steer); err == nil {
		rep.Steer = &steer
	} else if rep.Steer, err = r.steering(ctx, s, m); err != nil {
		return rep, false, fmt.Errorf("experiments: prm %s steering: %w", name, err)
	} else if err := writeJSONFile(base+"-steer.json", rep.Steer); err != nil {
		return rep, false, err
	}
	if len(src.EvaluateOn) == 0 {
		return rep, true, nil
	}
	var cached prm.Evaluation
	if err := readJSONFile(base+"-target.json", &cached); err == nil {
		rep.Target = &cached
		return rep, true, nil
	}
	trajs, err := r.targetTrajectories(ctx, s, src.EvaluateOn)
	if err != nil || len(trajs) == 0 {
		return rep, true, err
	}
	e := prm.Evaluate(m, trajs)
	rep.Target = &e
	return rep, true, writeJSONFile(base+"-target.json", e)
}

// targetTrajectories collects the recorded trajectories of the finished
// runs of variants.
func (r *Runner) targetTrajectories(ctx context.Context, s *Suite, variants []string) ([]*schemas.Trajectory, error) {
	jobs, err := s.Jobs(r.Quick)
	if err != nil {
		return nil, err
	}
	var trajs []*schemas.Trajectory
	for _, j := range jobs {
		if !contains(variants, j.Variant.Name) {
			continue
		}
		if _, err := os.Stat(r.ReportDir(j) + "/summary.json"); err != nil {
			continue
		}
		got, err := collectRun(ctx, r.RunDir(j), j.RunName())
		if err != nil {
			return nil, fmt.Errorf("experiments: %s: %w", j.RunName(), err)
		}
		trajs = append(trajs, got...)
	}
	return trajs, nil
}
