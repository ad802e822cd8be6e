package experiments

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/rspo-dev/rspo/prm"
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
	if len(src.EvaluateOn) == 0 {
		return rep, true, nil
	}
	var cached prm.Evaluation
	if err := readJSONFile(base+"-target.json", &cached); err == nil {
		rep.Target = &cached
		return rep, true, nil
	}
	m, err := prm.LoadFile(path)
	if err != nil {
		return rep, false, fmt.Errorf("experiments: prm %s: %w", name, err)
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
