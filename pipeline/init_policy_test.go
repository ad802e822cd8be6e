package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/streams"
)

// sourcePolicy trains a short base run named "src" in dir and returns the
// path of its final policy's snapshot.
func sourcePolicy(t *testing.T, dir string) string {
	t.Helper()
	src := smallRun(t, dir, false)
	src.Learner.Run, src.Learner.Updates = "src", 2
	sum, err := Run(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(sum.ReportDir, PolicyFile)
}

// warmRSPO is a short RSPO run on its own store, started from file.
func warmRSPO(t *testing.T, file string) Config {
	cfg := smallRun(t, t.TempDir(), true)
	cfg.Learner.Trainer.Alpha, cfg.InitPolicy = 0.25, file
	return cfg
}

// versionZero reads version 0 of run from the store in dir, serving the
// store only while it reads.
func versionZero(t *testing.T, dir, run string) []byte {
	t.Helper()
	emb, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: filepath.Join(dir, "nats"), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Shutdown()
	nc, js, err := emb.Connect(context.Background(), "check")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	b, err := streams.GetSnapshot(context.Background(), js, streams.BucketPolicy, streams.PolicyObject(run, 0))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// asVersionZero is the snapshot file's policy as a run's version 0.
func asVersionZero(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	if p.Version() == 0 {
		t.Fatal("the source run's final policy is version 0: it trained nothing, so the test proves nothing")
	}
	p.SetVersion(0)
	out, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A run warm-started from a snapshot file or from a recorded run's final
// policy begins with exactly that policy as version 0 (the reference of
// its KL term too), and says so in its summary.
func TestWarmStartBeginsWithTheSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	dir := t.TempDir()
	file := sourcePolicy(t, dir)
	want := asVersionZero(t, file)
	raw, _ := os.ReadFile(file)
	hash := sha256.Sum256(raw)
	for run, source := range map[string]string{"warm-file": file, "warm-run": "run:src"} {
		cfg := smallRun(t, dir, false)
		cfg.Learner.Run, cfg.Learner.Updates, cfg.InitPolicy = run, 1, source
		cfg.Settings = map[string]json.RawMessage{} // recorded and checked, as rspo run does
		sum, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatalf("%s: %v", source, err)
		}
		if got := versionZero(t, dir, cfg.Learner.Run); string(got) != string(want) {
			t.Errorf("%s: version 0 differs from the snapshot", source)
		}
		if source == file && (sum.InitPolicy == nil || sum.InitPolicy.Source != source || sum.InitPolicy.SHA256 != hex.EncodeToString(hash[:])) {
			t.Errorf("%s: summary's init policy %+v, want its source and the snapshot's hash", source, sum.InitPolicy)
		}
		if source == "run:src" && (sum.InitPolicy == nil || sum.InitPolicy.Run != "src" || sum.InitPolicy.Version != 2) {
			t.Errorf("%s: summary's init policy %+v, want run src's version 2", source, sum.InitPolicy)
		}
	}
	// The same run name asked to resume from another start is refused, and
	// a resumed run needs its start no more: its version 0 is stored.
	cfg := smallRun(t, dir, false)
	cfg.Learner.Run, cfg.Learner.Updates, cfg.InitPolicy = "warm-file", 2, filepath.Join(t.TempDir(), "other.policy")
	cfg.Settings = map[string]json.RawMessage{"init-policy": json.RawMessage(`"elsewhere"`)}
	if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrSettingsChanged) || !strings.Contains(err.Error(), "init-policy") {
		t.Errorf("resuming from another start: got %v, want ErrSettingsChanged naming init-policy", err)
	}
	cfg.Settings = nil
	sum, err := Run(context.Background(), cfg) // the file is gone: the run resumes from its record
	if err != nil || sum.InitPolicy == nil || sum.InitPolicy.Source != file || sum.Updates != 2 {
		t.Errorf("resumed without its file: %v, start %+v, %d updates; want the recorded start and 2 updates", err, sum.InitPolicy, sum.Updates)
	}
}

// A warm-started run interrupted and resumed ends with the policy of the
// uninterrupted one: the resumed learner reads its version 0 (the start)
// from its store.
func TestInterruptedWarmStartResumesToTheSamePolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	file := sourcePolicy(t, t.TempDir())
	sumWhole, err := Run(context.Background(), warmRSPO(t, file))
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, sumWhole, runInterrupted(t, warmRSPO(t, file), 3), "resumed warm-started run's")

	cold := smallRun(t, t.TempDir(), true)
	cold.Learner.Trainer.Alpha = 0.25
	sumCold, err := Run(context.Background(), cold)
	if err != nil {
		t.Fatal(err)
	}
	if policyHash(t, sumCold) == policyHash(t, sumWhole) {
		t.Error("the warm start changed nothing: the run trained the policy a fresh start trains")
	}
}

// reseal rewrites a snapshot's trailing CRC-32C after an edit, so the
// edit, not the checksum, is what a reader sees.
func reseal(b []byte) []byte {
	n := len(b) - 4
	binary.LittleEndian.PutUint32(b[n:], crc32.Checksum(b[:n], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// Every unusable start is refused with its cause before the run writes
// anything: a file fails before the store exists, a run before the new
// run's checkpoint or settings exist.
func TestWarmStartRefusesBadSources(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	dir := t.TempDir()
	file := sourcePolicy(t, dir)
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	edited := func(name string, edit func([]byte) []byte) string {
		b := edit(append([]byte(nil), good...))
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	unfinished := smallRun(t, dir, false)
	unfinished.Learner.Run = "unfinished"
	ctx, cancel := context.WithCancel(context.Background())
	unfinished.Progress = func(p learnersvc.Progress) { cancel() }
	if _, err := Run(ctx, unfinished); err == nil {
		t.Fatal("the interrupted run finished")
	}
	files := []struct{ name, source, want string }{
		{"missing file", filepath.Join(dir, "no-such.policy"), "no such file"},
		{"corrupt", edited("corrupt", func(b []byte) []byte { b[len(b)/2] ^= 0xff; return b }), "checksum"},
		{"other feature version", edited("features", func(b []byte) []byte { b[10]++; return reseal(b) }), "feature"},
		{"other format", edited("format", func(b []byte) []byte { b[8]++; return reseal(b) }), "format"},
		{"not a snapshot", edited("text", func([]byte) []byte { return []byte("hello") }), "not a policy snapshot"},
	}
	for _, tt := range files {
		t.Run(tt.name, func(t *testing.T) {
			fresh := filepath.Join(t.TempDir(), "data")
			cfg := smallRun(t, fresh, false)
			cfg.InitPolicy = tt.source
			_, err := Run(context.Background(), cfg)
			if !errors.Is(err, ErrInitPolicy) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want ErrInitPolicy saying %q", err, tt.want)
			}
			if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused run wrote %s", fresh)
			}
		})
	}
	for _, tt := range []struct{ name, source, want string }{
		{"missing run", "run:nosuch", "no run nosuch"},
		{"unfinished run", "run:unfinished", "has not finished"},
		{"bad run name", "run:a.b", "run name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := smallRun(t, dir, false)
			cfg.Learner.Run, cfg.InitPolicy = "refused", tt.source
			_, err := Run(context.Background(), cfg)
			if !errors.Is(err, ErrInitPolicy) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want ErrInitPolicy saying %q", err, tt.want)
			}
			if _, begun, err := learnersvc.LoadCheckpoint(context.Background(), openStore(t, dir), "refused"); err != nil || begun {
				t.Errorf("the refused run left a checkpoint (%v)", err)
			}
		})
	}
}

// A warm start works with an external trainer: the reference trainer
// trains from the stored version 0, the warm start, to the bit-identical
// policy of the built-in trainer.
func TestWarmStartWithAnExternalTrainer(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	file := sourcePolicy(t, t.TempDir())
	sumBuiltin, err := Run(context.Background(), warmRSPO(t, file))
	if err != nil {
		t.Fatal(err)
	}
	external := warmRSPO(t, file)
	external.Learner.TrainerMode = learnersvc.TrainerExternal
	sumExternal, err := Run(context.Background(), external)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := policyHash(t, sumBuiltin), policyHash(t, sumExternal); a != b {
		t.Fatalf("final policy: builtin %s, external %s", a, b)
	}
}

// init-policy source starts a run from the best final policy of its
// recipe's built-in source runs, judged on held-out train tasks; the base
// algorithm given the same start trains on the same source runs and
// counts the same environment steps for them.
func TestSourceStartIsTheBestSourcePolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	dir := t.TempDir()
	small := func(cfg Config) Config {
		for i := range cfg.SourceRuns {
			cfg.SourceRuns[i].Learner.Updates, cfg.SourceRuns[i].Learner.Tasks, cfg.SourceRuns[i].Learner.GroupSize = 3, 4, 4
			cfg.SourceRuns[i].Learner.EvalEpisodes, cfg.SourceRuns[i].Settings = 4, nil
		}
		cfg.Logger = smallRun(t, dir, true).Logger
		return cfg
	}
	recipe := small(tinyRecipeRun(t, "recipe", dir, func(o *Options) { o.InitPolicy = InitPolicySource }))
	base := small(tinyRecipeRun(t, "base", dir, func(o *Options) { o.InitPolicy, o.RSPO = InitPolicySource, false }))
	n := len(recipe.SourceRuns)
	if len(base.Sources) != 0 || len(base.SourceRuns) != n || n < 2 {
		t.Fatalf("the base run has PRM sources %v and %d source runs; want none and the recipe's %d", base.Sources, len(base.SourceRuns), n)
	}
	sumRecipe, err := Run(context.Background(), recipe)
	if err != nil {
		t.Fatal(err)
	}
	sumBase, err := Run(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	ri, bi := sumRecipe.InitPolicy, sumBase.InitPolicy
	if ri == nil || bi == nil || len(ri.Candidates) != n || ri.Run != bi.Run || ri.SHA256 != bi.SHA256 {
		t.Fatalf("starts: recipe %+v, base %+v; want one source run, chosen among %d by both", ri, bi, n)
	}
	for run, rate := range ri.Candidates {
		if rate > ri.Candidates[ri.Run] {
			t.Errorf("chose %s (%.3f) over %s (%.3f)", ri.Run, ri.Candidates[ri.Run], run, rate)
		}
	}
	if sumBase.EnvStepsSource != sumRecipe.EnvStepsSource || sumBase.EnvStepsSource == 0 {
		t.Errorf("source steps: base %d, recipe %d; want the same knowledge counted alike", sumBase.EnvStepsSource, sumRecipe.EnvStepsSource)
	}
	emb, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: filepath.Join(dir, "nats"), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Shutdown()
	nc, js, err := emb.Connect(context.Background(), "check")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	chosen, err := streams.GetSnapshot(context.Background(), js, streams.BucketPolicy, streams.PolicyObject(ri.Run, ri.Version))
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"recipe", "base"} {
		v0, err := streams.GetSnapshot(context.Background(), js, streams.BucketPolicy, streams.PolicyObject(run, 0))
		if err != nil {
			t.Fatal(err)
		}
		p, _ := policy.Load(chosen)
		p.SetVersion(0)
		want, _ := p.MarshalBinary()
		if string(v0) != string(want) {
			t.Errorf("%s: version 0 is not the chosen source policy", run)
		}
	}
}

// init-policy expert:K starts from SFT on K expert episodes, trained once
// per store: a second run reads the stored policy back, and both count
// the demonstrations' steps.
func TestExpertStartIsTrainedOnceAndCounted(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	dir := t.TempDir()
	var sums []Summary
	for _, run := range []string{"first", "second"} {
		cfg := smallRun(t, dir, false)
		cfg.Learner.Run, cfg.Learner.Updates, cfg.InitPolicy = run, 1, InitPolicyExpertPrefix+"32"
		sum, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, sum)
	}
	a, b := sums[0].InitPolicy, sums[1].InitPolicy
	if a == nil || b == nil || a.SHA256 != b.SHA256 || a.EnvSteps == 0 || a.EnvSteps != b.EnvSteps || sums[1].EnvStepsSource != a.EnvSteps {
		t.Errorf("starts %+v and %+v (source steps %d): want one stored policy, its demonstrations counted", a, b, sums[1].EnvStepsSource)
	}
	cfg := smallRun(t, dir, false)
	cfg.Learner.Run, cfg.InitPolicy = "bad", InitPolicyExpertPrefix+"x"
	if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrInitPolicy) {
		t.Errorf("expert:x: got %v, want ErrInitPolicy", err)
	}
}
