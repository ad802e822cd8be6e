package experiments

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/prm/prmsvc"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// PRMFile is the path of the PRM trained for source name of suite s.
func (r *Runner) PRMFile(suite, name string) string {
	return filepath.Join(r.suiteDir(suite), "prm-"+name+".rspo")
}

// ensurePRM trains the named PRM source from the recorded streams of its
// variants' runs, unless its file exists, and returns the file's path.
// The training report goes beside it (prm-<name>.json).
func (r *Runner) ensurePRM(ctx context.Context, s *Suite, name string) (string, error) {
	path := r.PRMFile(s.Name, name)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	src := s.PRMSources[name]
	jobs, err := s.Jobs(r.Quick)
	if err != nil {
		return "", err
	}
	var trajs []*schemas.Trajectory
	for _, j := range jobs {
		if !contains(src.Variants, j.Variant.Name) {
			continue
		}
		got, err := collectRun(ctx, r.RunDir(j), j.RunName())
		if err != nil {
			return "", fmt.Errorf("experiments: prm source %s: %w", name, err)
		}
		trajs = append(trajs, got...)
	}
	trajs = evenlySpaced(trajs, src.MaxTrajectories)
	m, rep, err := prm.Train(ctx, trajs, prm.TrainConfig{Target: src.Target})
	if err != nil {
		return "", fmt.Errorf("experiments: prm source %s (%d trajectories): %w", name, len(trajs), err)
	}
	if err := prm.SaveFile(path, m); err != nil {
		return "", err
	}
	r.logf("prm %s: trained on %d trajectories (%d successes), held-out AUC %.3f\n",
		name, rep.Trajectories, rep.Successes, rep.HeldoutEval.AUC)
	return path, writeJSONFile(path[:len(path)-len(".rspo")]+".json", rep)
}

// collectRun reads a finished run's trajectories from its store.
func collectRun(ctx context.Context, runDir, run string) ([]*schemas.Trajectory, error) {
	emb, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: filepath.Join(runDir, "nats"), Port: -1})
	if err != nil {
		return nil, err
	}
	defer emb.Shutdown()
	nc, js, err := emb.Connect(ctx, "rspo-experiments")
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	trajs, _, err := prmsvc.Collect(ctx, js, []prmsvc.Source{{Run: run}})
	return trajs, err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// evenlySpaced returns n elements of xs spread evenly over it, or xs when
// n is 0 or xs is not longer.
func evenlySpaced[T any](xs []T, n int) []T {
	if n <= 0 || len(xs) <= n {
		return xs
	}
	out := make([]T, n)
	for i := range out {
		out[i] = xs[i*len(xs)/n]
	}
	return out
}
