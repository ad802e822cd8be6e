package main

import (
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/llm/llmserve"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// TestActorPlaysThroughPolicyServer runs a plain (non-RSPO) run whose only
// actor plays through `rspo serve policy` over the chat-completions
// protocol: rspo serve policy + rspo serve actor --policy openai + rspo
// serve learner --policy openai, each its own process. The run finishes,
// every on-policy trajectory carries its token ids and token log-probs,
// and the learner's evaluations were played through the server too (under
// the pinned alias the server serves the newest version as).
func TestActorPlaysThroughPolicyServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the stages as processes; skipped with -short")
	}
	bin := buildRSPO(t)
	e, js, ctx := testBus(t, "llm-stages-test", 5*time.Minute)
	const run = "llmrun"
	dir := t.TempDir()
	polLog := filepath.Join(dir, "policy.log")
	server := newProc(t, bin, polLog, "serve", "policy", "--nats", e.ClientURL(), "--run", run, "--addr", "127.0.0.1:0", "--model", "newest")
	url := waitForLog(t, polLog, regexp.MustCompile(`url=(http://\S+/v1)`))
	newProc(t, bin, filepath.Join(dir, "actor.log"), "serve", "actor", "--nats", e.ClientURL(), "--run", run,
		"--parallel", "4", "--policy", "openai", "--endpoint", url)

	const updates = 3
	out, err := exec.CommandContext(ctx, bin, "serve", "learner", "--nats", e.ClientURL(), "--run", run,
		"--env-opt", "preset=easy", "--updates", "3", "--tasks", "2", "--group", "4", "--rspo=false",
		"--eval-every", "3", "--eval-episodes", "4", "--recipe", "paper",
		"--policy", "openai", "--endpoint", url, "--pin-model", "--model", "newest").CombinedOutput()
	if err != nil {
		b, _ := os.ReadFile(filepath.Join(dir, "actor.log"))
		t.Fatalf("learner: %v\n%s\nactor log:\n%s", err, out, b)
	}
	cp, ok, err := learnersvc.LoadCheckpoint(ctx, js, run)
	if err != nil || !ok || !cp.Finished || cp.Update != updates {
		t.Fatalf("checkpoint: %+v (found %v, err %v)", cp, ok, err)
	}
	trajs, steps := 0, 0
	err = streams.Replay(ctx, js, streams.ReplayOptions{Run: run, Subject: streams.KindTrajOnPolicy}, func(m streams.Message) error {
		tr := m.Trajectory
		trajs++
		for i, s := range tr.Steps {
			steps++
			if len(s.TokenIDs) != 1 || len(s.TokenLogProbs) != 1 || float64(s.TokenLogProbs[0])-s.BehaviorLogProb > 1e-6 ||
				s.BehaviorLogProb-float64(s.TokenLogProbs[0]) > 1e-6 {
				t.Errorf("trajectory %s step %d: token ids %v, token log-probs %v, behaviour log-prob %v",
					tr.ID, i, s.TokenIDs, s.TokenLogProbs, s.BehaviorLogProb)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := updates * 2 * 4; trajs < want {
		t.Errorf("%d on-policy trajectories, want at least %d", trajs, want)
	}
	models := 0
	err = streams.Replay(ctx, js, streams.ReplayOptions{Run: run, Subject: "ctrl.policy.published"}, func(m streams.Message) error {
		if want := schemas.DefaultModelName(run, m.Event.PolicyVersion); m.Event.Model != want {
			t.Errorf("version %d announced as model %q, want %q", m.Event.PolicyVersion, m.Event.Model, want)
		}
		models++
		return nil
	})
	if err != nil || models != updates+1 {
		t.Errorf("policy.published: %d events (err %v), want %d", models, err, updates+1)
	}
	if err := server.stop(); err != nil {
		t.Fatalf("policy server: %v", err)
	}
	answered := waitForLog(t, polLog, regexp.MustCompile(`answered="map\[([^\]]*)\]"`))
	m := regexp.MustCompile(`newest:(\d+)`).FindStringSubmatch(answered)
	if m == nil || m[1] == "0" {
		t.Errorf("the learner's evaluations were not played through the server: answered %s", answered)
	}
	t.Logf("%d trajectories, %d steps through the policy server; answered %s", trajs, steps, answered)
}

// waitForLog polls a process's log until re matches and returns its first
// group.
func waitForLog(t *testing.T, path string, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		if m := re.FindSubmatch(b); m != nil {
			return string(m[1])
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, _ := os.ReadFile(path)
	t.Fatalf("%s never matched %s:\n%s", path, re, b)
	return ""
}

func TestServePolicyFlags(t *testing.T) {
	for _, tc := range []struct {
		f    servePolicyFlags
		want string
	}{
		{servePolicyFlags{run: "r1", addr: ":8000", keep: 1, embedModel: "e", embedDim: 8}, ""},
		{servePolicyFlags{run: "r1", addr: "127.0.0.1:0", keep: 1, embedModel: "none"}, ""},
		{servePolicyFlags{run: "", addr: ":8000", keep: 1, embedModel: "none"}, "--run"},
		{servePolicyFlags{run: "r1", addr: ":8000", keep: 0, embedModel: "none"}, "--keep 0"},
		{servePolicyFlags{run: "r1", addr: ":8000", keep: 2, embedModel: "none", alias: strings.Repeat("m", schemas.MaxModelName+1)}, "--model"},
		{servePolicyFlags{run: "r1", addr: ":8000", keep: 1}, "--embed-model is empty"},
		{servePolicyFlags{run: "r1", addr: ":8000", keep: 1, embedModel: "e", embedDim: 0}, "--embed-dim 0"},
		{servePolicyFlags{run: "r1", addr: "8000", keep: 1, embedModel: "none"}, `--addr "8000": want host:port`},
	} {
		err := tc.f.validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: got %v, want %q", tc.f, err, tc.want)
		}
	}
}

// TestPolicyLibraryKeepsNewest: the library serves the newest --keep
// versions, a re-announced name once, and the alias as the newest version.
func TestPolicyLibraryKeepsNewest(t *testing.T) {
	p, err := policy.New(policy.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := llmserve.New()
	lib := &policyLibrary{srv: srv, keep: 2, alias: "latest", log: slog.New(slog.NewTextHandler(io.Discard, nil)), newest: -1}
	for _, v := range []int64{0, 1, 1, 2, 3} {
		lib.serve(schemas.DefaultModelName("r", v), v, p)
	}
	if got := strings.Join(srv.Models(), ","); got != "latest,r-v2,r-v3" {
		t.Errorf("served %s, want latest,r-v2,r-v3", got)
	}
	lib.serve("r-v1", 1, p) // an older version announced late: served, not the alias
	if got := strings.Join(srv.Models(), ","); got != "latest,r-v1,r-v3" || lib.newest != 3 {
		t.Errorf("served %s (newest %d), want latest,r-v1,r-v3 and 3", got, lib.newest)
	}
}

// TestTiltedRunThroughPolicyServer runs RSPO with the tilted explorer,
// every stage its own process, the actor and the explorer playing through
// `rspo serve policy`: the explorer's tilted cycles sample by SIR over the
// server's completions. The run finishes; on-policy and explorer
// trajectories alike carry token ids, and the explorer's reach the buffer.
func TestTiltedRunThroughPolicyServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every stage as a process; skipped with -short")
	}
	bin := buildRSPO(t)
	e, js, ctx := testBus(t, "llm-tilt-test", 5*time.Minute)
	const run = "llmtilt"
	dir := t.TempDir()
	polLog := filepath.Join(dir, "policy.log")
	newProc(t, bin, polLog, "serve", "policy", "--nats", e.ClientURL(), "--run", run, "--addr", "127.0.0.1:0")
	url := waitForLog(t, polLog, regexp.MustCompile(`url=(http://\S+/v1)`))
	served := []string{"--policy", "openai", "--endpoint", url}
	for _, stage := range [][]string{
		append([]string{"actor", "--parallel", "4"}, served...),
		append([]string{"explorer", "--parallel", "4"}, served...),
		{"swapper"},
		{"buffer", "--data", filepath.Join(dir, "buffer")},
	} {
		args := append([]string{"serve", stage[0], "--nats", e.ClientURL(), "--run", run}, stage[1:]...)
		newProc(t, bin, filepath.Join(dir, stage[0]+".log"), args...)
	}
	const updates = 4
	out, err := exec.CommandContext(ctx, bin, "serve", "learner", "--nats", e.ClientURL(), "--run", run,
		"--env-opt", "preset=easy", "--updates", "4", "--tasks", "2", "--group", "4", "--k", "2", "--alpha", "0.25",
		"--explore-tilt", "2", "--eval-every", "4", "--eval-episodes", "4", "--prm-warmup-tasks", "8",
		"--recipe", "paper").CombinedOutput()
	if err != nil {
		b, _ := os.ReadFile(filepath.Join(dir, "explorer.log"))
		t.Fatalf("learner: %v\n%s\nexplorer log:\n%s", err, out, b)
	}
	cp, ok, err := learnersvc.LoadCheckpoint(ctx, js, run)
	if err != nil || !ok || !cp.Finished || cp.Update != updates {
		t.Fatalf("checkpoint: %+v (found %v, err %v)", cp, ok, err)
	}
	counts := map[streams.SubjectKind]int{}
	for _, kind := range []streams.SubjectKind{streams.KindTrajOnPolicy, streams.KindTrajExplore, streams.KindSwapped} {
		err := streams.Replay(ctx, js, streams.ReplayOptions{Run: run, Subject: kind}, func(m streams.Message) error {
			counts[kind]++
			for i, s := range m.Trajectory.Steps {
				if len(s.TokenIDs) != 1 || s.TokenIDs[0] != llmserve.TokenID(s.Action) {
					t.Errorf("%s trajectory %s step %d: token ids %v for %q", kind, m.Trajectory.ID, i, s.TokenIDs, s.Action)
					return nil
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if counts[streams.KindTrajExplore] == 0 || counts[streams.KindTrajExplore] != counts[streams.KindSwapped] {
		t.Errorf("trajectories %v: want explorer trajectories, every one swapped", counts)
	}
	t.Logf("trajectories %v", counts)
}
