package experiments

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/rspo-dev/rspo/pipeline"
)

// sourcesDirPrefix starts the name of a suite's directory of shared PRM
// source runs (see seedSources).
const sourcesDirPrefix = "sources-"

// seedSources gives job j, when it trains on built-in PRM source runs and
// has not started, a copy of a store in which the suite trained those
// source runs and their PRM once (pipeline.PrepareSources), so that j
// reuses them instead of training them again. A source run is the base
// algorithm on fixed seeds, recorded the same way by every run that trains
// it, so the copy holds what j would have recorded itself; its
// environment steps still count in j's compute-fair figures
// (Summary.EnvStepsSource). It returns whether j got a copy.
func (r *Runner) seedSources(ctx context.Context, j Job, cfg pipeline.Config) (bool, error) {
	if len(cfg.SourceRuns) == 0 || r.KeepSourcesPerRun {
		return false, nil
	}
	dst := r.RunDir(j)
	if _, err := os.Stat(dst); err == nil { // a started run resumes on its own store
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	shared := filepath.Join(r.suiteDir(j.Suite), sourcesDirPrefix+sourcesKey(sourceRunNames(cfg)))
	seed, err := pipelineConfig(j.Config, j.RunName(), j.Seed, shared)
	if err != nil {
		return false, err
	}
	seed.Logger = r.logger()
	if err := os.MkdirAll(shared, 0o755); err != nil {
		return false, fmt.Errorf("experiments: %w", err)
	}
	unlock, err := lockDir(shared)
	if err != nil {
		return false, err
	}
	defer unlock()
	r.logf("%s: source runs %s (and their PRM) from %s (trained there once for the suite)\n", j.RunName(), strings.Join(sourceRunNames(cfg), ", "), filepath.Base(shared))
	_, err = os.Stat(filepath.Join(shared, "nats"))
	existed := err == nil // trained by an earlier runner
	if err := pipeline.PrepareSources(ctx, seed); err != nil {
		return false, err
	}
	note, err := sourcesRevision(shared, existed, r.Revision)
	if err != nil {
		return false, err
	}
	if note != "" {
		r.logf("%s: %s\n", j.RunName(), note)
	}
	if err := os.CopyFS(dst, os.DirFS(shared)); err != nil {
		_ = os.RemoveAll(dst) // a partial copy must not pass for a started run
		return false, fmt.Errorf("experiments: copy the shared source runs to %s: %w", dst, err)
	}
	return true, nil
}

// sourcesRevisionFile, in a shared sources directory, names the code
// revision that trained its source runs.
const sourcesRevisionFile = "revision"

// sourcesRevision records rev as the revision of the source runs in
// shared when this runner trained them (existed false), and otherwise
// returns a warning when they were trained by other code: the directory is
// keyed by the source runs' names, not by the code, so a change that
// alters what a source run records (its environment, its algorithm) is
// not seen, and every run of the suite would be steered by the old runs'
// PRM. An empty rev (a build without VCS information) compares equal to
// anything.
func sourcesRevision(shared string, existed bool, rev string) (string, error) {
	path := filepath.Join(shared, sourcesRevisionFile)
	if !existed {
		if err := os.WriteFile(path, []byte(rev+"\n"), 0o644); err != nil {
			return "", fmt.Errorf("experiments: %w", err)
		}
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("experiments: %w", err)
	}
	old := cmp.Or(strings.TrimSpace(string(b)), unrecordedRevision)
	if rev == "" || old == rev {
		return "", nil
	}
	return fmt.Sprintf("warning: these source runs were trained by revision %s, not by this binary's %s; if the code changed what they record, delete %s to train them again", old, rev, shared), nil
}

// sourceRunNames are the names of cfg's built-in source runs.
func sourceRunNames(cfg pipeline.Config) []string {
	names := make([]string, len(cfg.SourceRuns))
	for i, sc := range cfg.SourceRuns {
		names[i] = sc.Learner.Run
	}
	return names
}

// sourcesKey names a list of source runs in a directory name.
func sourcesKey(sources []string) string {
	h := sha256.Sum256([]byte(strings.Join(sources, "\x00")))
	return fmt.Sprintf("%x", h[:6])
}

// lockFile is the lock of a shared sources directory, beside it.
func lockFile(dir string) string { return dir + ".lock" }

// lockDir holds an exclusive lock on dir (through a file beside it) until
// the returned function is called, so runners sharing a data directory
// (Runner.Only) neither train the same source runs twice nor copy a store
// another is writing.
func lockDir(dir string) (func(), error) {
	f, err := os.OpenFile(lockFile(dir), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("experiments: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("experiments: lock %s: %w", dir, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
