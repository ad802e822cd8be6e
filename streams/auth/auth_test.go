package auth_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	_ "github.com/rspo-dev/rspo/envs/household"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/auth"
)

// server is an embedded server running the generated configuration for
// runs ra and rb, with the topology ensured in both accounts.
type server struct {
	t   *testing.T
	dir string
	emb *streams.Embedded
}

func startServer(t *testing.T) *server {
	t.Helper()
	dir := t.TempDir()
	set, err := auth.Generate([]string{"ra", "rb"})
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Write(dir); err != nil {
		t.Fatal(err)
	}
	emb, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: t.TempDir(), Port: -1,
		ConfigFile: filepath.Join(dir, auth.ConfigFile)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Shutdown)
	log := &serverLog{}
	emb.Server().SetLogger(log, false, false)
	t.Cleanup(func() {
		if v := log.violations(); len(v) > 0 && !strings.Contains(t.Name(), "Refusals") && !strings.Contains(t.Name(), "Isolated") {
			t.Errorf("the server refused: %v", v)
		}
	})
	if got, want := emb.Accounts(), []string{"rspo-ra", "rspo-rb"}; !slices.Equal(got, want) {
		t.Fatalf("accounts: got %v, want %v", got, want)
	}
	for _, acc := range emb.Accounts() {
		nc, js, err := emb.ConnectAccount(context.Background(), acc, "ensure")
		if err != nil {
			t.Fatal(err)
		}
		if err := streams.Ensure(context.Background(), js, streams.Options{}); err != nil {
			t.Fatal(err)
		}
		nc.Close()
	}
	return &server{t: t, dir: dir, emb: emb}
}

// serverLog records the permission violations the server logs.
type serverLog struct {
	mu   sync.Mutex
	errs []string
}

func (l *serverLog) Errorf(format string, v ...any) {
	if m := fmt.Sprintf(format, v...); strings.Contains(m, "Violation") {
		l.mu.Lock()
		l.errs = append(l.errs, m)
		l.mu.Unlock()
	}
}

func (l *serverLog) violations() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.errs)
}

func (*serverLog) Noticef(string, ...any) {}
func (*serverLog) Warnf(string, ...any)   {}
func (*serverLog) Fatalf(string, ...any)  {}
func (*serverLog) Debugf(string, ...any)  {}
func (*serverLog) Tracef(string, ...any)  {}

func (s *server) creds(run, stage string) string { return auth.CredsPath(s.dir, run, stage) }

// conn connects as stage of run and records the permission violations the
// server reports to it.
func (s *server) conn(run, stage string) (*nats.Conn, jetstream.JetStream, *violations) {
	s.t.Helper()
	v := &violations{}
	seed, err := nats.NkeyOptionFromSeed(s.creds(run, stage))
	if err != nil {
		s.t.Fatal(err)
	}
	nc, err := nats.Connect(s.emb.ClientURL(), seed, nats.ErrorHandler(v.record))
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		s.t.Fatal(err)
	}
	return nc, js, v
}

type violations struct {
	mu   sync.Mutex
	errs []string
}

func (v *violations) record(_ *nats.Conn, _ *nats.Subscription, err error) {
	if errors.Is(err, nats.ErrPermissionViolation) || strings.Contains(err.Error(), "Permissions Violation") {
		v.mu.Lock()
		v.errs = append(v.errs, err.Error())
		v.mu.Unlock()
	}
}

func (v *violations) list() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.errs)
}

func TestAuthCredsFilesArePrivate(t *testing.T) {
	s := startServer(t)
	files := []string{filepath.Join(s.dir, auth.ConfigFile)}
	for _, run := range []string{"ra", "rb"} {
		for _, stage := range auth.Stages() {
			files = append(files, s.creds(run, stage))
		}
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
}

func TestAuthStagesCoverThePipeline(t *testing.T) {
	for _, name := range pipeline.StageNames() {
		if !slices.Contains(auth.Stages(), name) {
			t.Errorf("pipeline stage %q has no user", name)
		}
	}
}

func TestAuthGenerateRefuses(t *testing.T) {
	for _, runs := range [][]string{nil, {"a.b"}, {"a", "a"}, {""}} {
		if _, err := auth.Generate(runs); err == nil {
			t.Errorf("Generate(%q): no error", runs)
		}
	}
}

// TestAuthTrainingWithStageCredentials trains a short RSPO run in which
// every stage serves as `rspo serve STAGE --creds FILE` does, each with its
// own credentials, and checks that none was refused anything.
func TestAuthTrainingWithStageCredentials(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	trainWithCredentials(t, learnersvc.TrainerBuiltin)
}

// TestAuthExternalTrainerWithStageCredentials is the same run with its
// updates applied by the reference external trainer under its own user:
// the learner may publish batches, the trainer consume them and publish
// the policy versions.
func TestAuthExternalTrainerWithStageCredentials(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	trainWithCredentials(t, learnersvc.TrainerExternal)
}

func trainWithCredentials(t *testing.T, mode learnersvc.TrainerMode) {
	s := startServer(t)
	cfg := pipeline.Config{
		DataDir: t.TempDir(), NATSURL: s.emb.ClientURL(),
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Learner: learnersvc.Config{
			Run: "ra", Env: "household", EnvOptions: map[string]string{"preset": "easy"},
			Updates: 2, Tasks: 4, GroupSize: 4, K: 2, RSPO: true, Seed: 3,
			PRMWarmupTasks: 8, EvalEpisodes: 4, EvalEvery: 2,
			RolloutTimeout: time.Minute, ExploreTimeout: time.Minute, TrainerMode: mode,
		},
	}
	if mode == learnersvc.TrainerBuiltin {
		cfg.Learner.EvalShards = 2 // the actor plays the evaluation's shards under its own user
	}
	stages := []string{auth.Actor, auth.Explorer, auth.Swapper, auth.Buffer}
	if mode == learnersvc.TrainerExternal {
		stages = append(stages, auth.Trainer)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bg, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for _, stage := range stages {
		wg.Go(func() {
			if err := pipeline.Serve(bg, withCreds(cfg, s.creds("ra", stage)), stage); err != nil && bg.Err() == nil {
				errs <- err
				cancel()
			}
		})
	}
	err := pipeline.Serve(ctx, withCreds(cfg, s.creds("ra", auth.Learner)), auth.Learner)
	stop()
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if err != nil {
		t.Fatal(err)
	}
	_, js, v := s.conn("ra", auth.Learner)
	cp, _, err := learnersvc.LoadCheckpoint(ctx, js, "ra")
	if err != nil {
		t.Fatal(err)
	}
	if cp.Update != 2 || cp.Version == 0 {
		t.Errorf("checkpoint: update %d, policy version %d; want 2 updates and a published policy", cp.Update, cp.Version)
	}
	if got := v.list(); len(got) > 0 {
		t.Errorf("permission violations: %v", got)
	}
}

func withCreds(c pipeline.Config, creds string) pipeline.Config {
	c.Connect = streams.ConnectOptions{CredsFile: creds}
	return c
}

// TestAuthRefusals checks that a stage is refused what its permissions do
// not allow, in its own run and in another.
func TestAuthRefusals(t *testing.T) {
	s := startServer(t)
	tests := []struct {
		run, stage, subject string
	}{
		{"ra", auth.Actor, "rspo.rb.ctrl.cycle.started"},
		{"ra", auth.Actor, "rspo.ra.ctrl.cycle.started"},
		{"ra", auth.Explorer, "rspo.ra.work.rollout"},
		{"ra", auth.Explorer, "rspo.ra.work.explore"},
		{"ra", auth.Actor, "rspo.ra.work.explore"},
		{"ra", auth.Actor, "rspo.ra.work.eval"},
		{"ra", auth.Explorer, "rspo.ra.eval.3"},
		{"ra", auth.Actor, "rspo.rb.eval.3"},
		{"ra", auth.Swapper, "rspo.ra.traj.onpolicy"},
		{"ra", auth.Buffer, "rspo.ra.ctrl.cycle.ended"},
		// the learner's cycle record: readable by the stages that check
		// cycle events against it, written by the learner alone
		{"ra", auth.Explorer, "$KV.rspo_state.ra.learner.cycles"},
		{"ra", auth.Swapper, "$KV.rspo_state.ra.learner.cycles"},
		{"ra", auth.Buffer, "$KV.rspo_state.ra.learner.cycles"},
		{"ra", auth.Explorer, "$JS.API.DIRECT.GET.KV_rspo_state.$KV.rspo_state.ra.learner.checkpoint"},
		{"ra", auth.PRM, "$O.rspo_prm.C.x"},
		{"ra", auth.Learner, "$JS.API.STREAM.DELETE.RSPO_TRAJ"},
		{"ra", auth.Actor, "$JS.API.STREAM.CREATE.RSPO_X"},
		{"ra", auth.Policy, "rspo.ra.ctrl.policy.published"},
		{"ra", auth.Policy, "$O.rspo_policy.C.x"},
		{"ra", auth.Policy, "rspo.ra.dlq.actor"},
	}
	for _, tc := range tests {
		t.Run(tc.stage+" "+tc.subject, func(t *testing.T) {
			nc, _, v := s.conn(tc.run, tc.stage)
			if err := nc.Publish(tc.subject, []byte("x")); err != nil {
				t.Fatal(err)
			}
			waitViolation(t, nc, v, "Publish to \""+tc.subject+"\"")
		})
	}
}

func waitViolation(t *testing.T, nc *nats.Conn, v *violations, want string) {
	t.Helper()
	if nc != nil {
		_ = nc.Flush()
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		for _, e := range v.list() {
			if strings.Contains(e, want) {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("no permissions violation for %s; got %v", want, v.list())
}

// TestAuthRunsAreIsolated checks that run ra's explorer cannot read run
// rb's policy snapshot nor consume rb's explore shards, and that it can read its
// own run's snapshot but not overwrite it.
func TestAuthRunsAreIsolated(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	for _, run := range []string{"ra", "rb"} {
		_, js, _ := s.conn(run, auth.Learner)
		if err := streams.PutSnapshot(ctx, js, streams.BucketPolicy, streams.PolicyObject(run, 1), []byte(run)); err != nil {
			t.Fatal(err)
		}
	}
	_, js, v := s.conn("ra", auth.Explorer)
	got, err := streams.GetSnapshot(ctx, js, streams.BucketPolicy, streams.PolicyObject("ra", 1))
	if err != nil || string(got) != "ra" {
		t.Fatalf("own snapshot: %q, %v", got, err)
	}
	if b, err := streams.GetSnapshot(ctx, js, streams.BucketPolicy, streams.PolicyObject("rb", 1)); err == nil {
		t.Errorf("read run rb's snapshot: %q", b)
	}
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := streams.PutSnapshot(short, js, streams.BucketPolicy, streams.PolicyObject("ra", 2), []byte("x")); err == nil {
		t.Error("the explorer stored a policy snapshot")
	}
	short2, cancel2 := context.WithTimeout(ctx, time.Second)
	defer cancel2()
	_, err = js.CreateOrUpdateConsumer(short2, streams.StreamWork, jetstream.ConsumerConfig{
		Durable: "explorers-rb", FilterSubject: "rspo.rb.work.explore"})
	if err == nil {
		t.Error("run ra's explorer consumed run rb's explore shards")
	}
	waitViolation(t, nil, v, "rspo.rb.work.explore")
}
