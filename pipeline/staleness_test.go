package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

// stalenessOptions are a short base-algorithm run on the easy preset,
// from a JSON object of options over the paper recipe's defaults.
func stalenessOptions(t *testing.T, dir, extra string) Options {
	t.Helper()
	o := DefaultOptions()
	o.Recipe = RecipePaper
	o, err := o.WithRecipe(func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	base := `{"run": "st", "rspo": false, "env-opt": {"preset": "easy"}, "updates": 5, "tasks": 4, "group": 4,
		"seed": 3, "eval-episodes": 8, "eval-every": 2}`
	for _, js := range []string{base, extra} {
		if err := json.Unmarshal([]byte(js), &o); err != nil {
			t.Fatal(err)
		}
	}
	o.Data = dir
	return o
}

func runOptions(t *testing.T, o Options) (Summary, Config) {
	t.Helper()
	cfg, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger, cfg.Learner.RolloutTimeout = smallRun(t, "", false).Logger, time.Minute
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sum, cfg
}

// max-staleness 0 is the synchronous loop: a run that gives it trains the
// policy of a run whose options do not have the key, to the bit, and
// each resumes the other's recorded settings.
func TestMaxStalenessZeroIsTheSynchronousRun(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	without, cfgWithout := runOptions(t, stalenessOptions(t, t.TempDir(), `{}`))
	with, cfgWith := runOptions(t, stalenessOptions(t, t.TempDir(), `{"max-staleness": 0}`))
	if a, b := policyHash(t, without), policyHash(t, with); a != b {
		t.Fatalf("final policy: without the key %s, with max-staleness 0 %s", a, b)
	}
	old := cfgWithout.Settings
	delete(old, "max-staleness") // recorded before the key existed
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	if err := CheckSettings(ctx, js, "st", old); err != nil {
		t.Fatal(err)
	}
	if err := CheckSettings(ctx, js, "st", cfgWith.Settings); err != nil {
		t.Errorf("max-staleness 0 refused on a run recorded without the key: %v", err)
	}
	one := stalenessOptions(t, "", `{"max-staleness": 1}`).Settings()
	if err := CheckSettings(ctx, js, "st", one); !errors.Is(err, ErrSettingsChanged) {
		t.Errorf("max-staleness 1 on a synchronous run: got %v, want ErrSettingsChanged", err)
	}
}

// updateValues are the learner's update metrics of a run, in order.
func updateValues(t *testing.T, js jetstream.JetStream, run string) []map[string]float64 {
	t.Helper()
	var out []map[string]float64
	err := streams.Replay(context.Background(), js, streams.ReplayOptions{Run: run, Subject: "metrics.learner"}, func(m streams.Message) error {
		if m.Metrics != nil && m.Metrics.Kind == "update" {
			out = append(out, m.Metrics.Values)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A pipelined run (max-staleness 1) trains on rollouts one version old
// from its second update on, and trains the same policy every time, with
// one actor or two: what each update trains on depends on the update and
// the seed, not on how fast the actors are. It is not the synchronous
// run's policy.
func TestMaxStalenessOneIsDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	sync, _ := runOptions(t, stalenessOptions(t, t.TempDir(), `{}`))
	var hashes []string
	for i := range 2 {
		s := streamstest.RunServer(t)
		_, js := streamstest.Connect(t, s)
		o := stalenessOptions(t, t.TempDir(), `{"max-staleness": 1}`)
		cfg, err := o.Config()
		if err != nil {
			t.Fatal(err)
		}
		cfg.NATSURL, cfg.Logger, cfg.Learner.RolloutTimeout = s.ClientURL(), smallRun(t, "", false).Logger, time.Minute
		cfg.Actors = 1 + i // other timings: two actors share the requests
		sum, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, policyHash(t, sum))
		vals := updateValues(t, js, cfg.Learner.Run)
		if len(vals) != 5 {
			t.Fatalf("update metrics: got %d, want 5", len(vals))
		}
		for u, v := range vals {
			want := min(float64(u), 1)
			if v["version_lag_max"] != want || v["version_lag_mean"] != want {
				t.Errorf("update %d: version lag max %v, mean %v; want %v", u+1, v["version_lag_max"], v["version_lag_mean"], want)
			}
			if v["stale_refused"] != 0 {
				t.Errorf("update %d: %v trajectories refused as stale, want 0", u+1, v["stale_refused"])
			}
		}
	}
	if hashes[0] != hashes[1] {
		t.Errorf("max-staleness 1 trained %s, then %s: want the same policy", hashes[0], hashes[1])
	}
	if h := policyHash(t, sync); h == hashes[0] {
		t.Errorf("max-staleness 1 trained the synchronous run's policy %s: the rollouts did not lag", h)
	}
}

// forgedStale is a trajectory with the id of update 3's first rollout
// (u = 2: π_θ version 2 trains on rollouts of version 1 with
// max-staleness 1) played by version 0: 2 versions behind. The id carries
// the request's nonce, which the forger read off the run's nonce key (an
// attacker would read it off the request, which reaches every actor).
func forgedStale(t *testing.T, js jetstream.JetStream, cfg Config) *schemas.Trajectory {
	t.Helper()
	key, ok, err := learnersvc.LoadNonceKey(context.Background(), js, cfg.Learner.Run)
	if err != nil || !ok {
		t.Fatalf("nonce key: %v (found %v)", err, ok)
	}
	lc := cfg.Learner.WithDefaults()
	env, err := envs.New(lc.Env, lc.EnvOptions)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := env.Tasks(envs.SplitTrain, lc.Tasks, rollout.EpisodeSeed(lc.Seed, "tasks", 2))
	if err != nil {
		t.Fatal(err)
	}
	req := schemas.RolloutRequest{ID: "u2-v1-0", Run: lc.Run, Update: 2, PolicyVersion: 1, Source: schemas.SourceOnPolicy,
		Env: lc.Env, EnvOptions: lc.EnvOptions, GroupSize: lc.GroupSize, Seed: rollout.EpisodeSeed(lc.Seed, "u2"),
		Tasks: rollout.TaskRefs(tasks[:lc.ChunkTasks]), Nonce: key.Rollout("u2-v1-0", 0)}
	return &schemas.Trajectory{ID: rollout.RequestTrajectoryID(req, 0, 0), Run: lc.Run, Source: schemas.SourceOnPolicy,
		PolicyVersion: 0, Env: lc.Env, TaskID: tasks[0].ID, GroupID: rollout.RequestGroupID(req, req.Tasks[0]),
		Steps:         []schemas.Step{{Observation: "forged", Action: "look", Admissible: []string{"look"}, NumAdmissible: 1, Reward: 1}},
		OutcomeReward: 1, Success: true}
}

// A trajectory older than max-staleness allows, with the id the learner
// waits for, is refused and counted; the run trains on the actor's own
// trajectory and ends with the policy of a run without the forgery.
func TestStaleTrajectoryIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	clean, _ := runOptions(t, stalenessOptions(t, t.TempDir(), `{"max-staleness": 1}`))

	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	o := stalenessOptions(t, t.TempDir(), `{"max-staleness": 1}`)
	cfg, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.NATSURL, cfg.Logger, cfg.Learner.RolloutTimeout = s.ClientURL(), smallRun(t, "", false).Logger, time.Minute
	run := cfg.Learner.Run
	// Published after update 1, before update 3's rollouts are asked for
	// (at update 2's start): the learner reads it before the genuine ones.
	// Under a message id of its own, so the actor's genuine trajectory is
	// stored too (TestRefusedTrajectoryUnderTheGenuineIDIsAskedForAgain
	// publishes under the genuine id).
	var forgeErr error
	cfg.Progress = func(p learnersvc.Progress) {
		if p.Update == 1 {
			stale := forgedStale(t, js, cfg)
			h := streams.TrajectoryHeaders(stale)
			h.Set(streams.HeaderMsgID, "forged/"+stale.ID)
			b, err := schemas.EncodeTrajectory(stale)
			if err == nil {
				_, err = streams.Publish(context.Background(), js, streams.Subjects(run).Traj(schemas.SourceOnPolicy), b, h)
			}
			forgeErr = err
		}
	}
	sum, err := Run(context.Background(), cfg)
	if forgeErr != nil {
		t.Fatal(forgeErr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if a, b := policyHash(t, clean), policyHash(t, sum); a != b {
		t.Errorf("final policy with a stale forgery %s, without %s: the stale trajectory was trained on", b, a)
	}
	vals := updateValues(t, js, run)
	if got := vals[len(vals)-1]["stale_refused"]; got != 1 {
		t.Errorf("stale_refused %v, want 1", got)
	}
	for u, v := range vals {
		if v["version_lag_max"] > 1 {
			t.Errorf("update %d trained on a trajectory %v versions old, max-staleness 1", u+1, v["version_lag_max"])
		}
	}
}

// A pipelined run whose updates an external trainer applies trains the
// built-in trainer's policy to the bit: the batch's trainer settings ask
// for the decoupled correction, and its rows carry each step's generating
// version, from which the reference trainer computes π_prox.
func TestPipelinedExternalTrainerTrainsAsBuiltin(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	builtin := smallRun(t, t.TempDir(), false)
	builtin.Learner.MaxStaleness, builtin.Learner.Trainer.Epochs = 1, 2 // π_prox from a pass of its own
	sumBuiltin, err := Run(context.Background(), builtin)
	if err != nil {
		t.Fatal(err)
	}
	external := smallRun(t, t.TempDir(), false)
	external.Learner.MaxStaleness, external.Learner.Trainer.Epochs, external.Learner.TrainerMode = 1, 2, learnersvc.TrainerExternal
	sumExternal, err := Run(context.Background(), external)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := policyHash(t, sumBuiltin), policyHash(t, sumExternal); a != b {
		t.Fatalf("final policy: builtin %s, external %s", a, b)
	}
	sync := smallRun(t, t.TempDir(), false)
	sync.Learner.Trainer.Epochs = 2
	sumSync, err := Run(context.Background(), sync)
	if err != nil {
		t.Fatal(err)
	}
	if policyHash(t, sumSync) == policyHash(t, sumBuiltin) {
		t.Error("max-staleness 1 trained the synchronous run's policy")
	}
}

// A pipelined run interrupted after its third update and resumed ends
// with the policy of the uninterrupted one: the resumed learner asks again
// for the rollouts it had asked for ahead, and its checkpoint's stream
// position is before the first of them it had read.
func TestPipelinedRunResumesToTheSamePolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	whole := smallRun(t, t.TempDir(), true)
	whole.Learner.Trainer.Alpha, whole.Learner.MaxStaleness = 0.25, 2
	sumWhole, err := Run(context.Background(), whole)
	if err != nil {
		t.Fatal(err)
	}
	parts := smallRun(t, t.TempDir(), true)
	parts.Learner.Trainer.Alpha, parts.Learner.MaxStaleness = 0.25, 2
	sumParts := runInterrupted(t, parts, 3)
	if a, b := policyHash(t, sumWhole), policyHash(t, sumParts); a != b {
		t.Errorf("final policy: uninterrupted %s, resumed %s", a, b)
	}
}

// Under the genuine trajectory's message id a forgery makes JetStream drop
// the actor's own as a duplicate. Such an update used to fail once
// RolloutTimeout passed (a stale copy) or train on the forgery (any
// other). The learner refuses and dead-letters the forgery — stale, or
// implausible (rewards of 1e308) — and asks for the request again under a
// fresh nonce; the actor plays the same episodes under new ids, and the
// run trains the policy of a run without the forgery.
func TestRefusedTrajectoryUnderTheGenuineIDIsAskedForAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	clean, _ := runOptions(t, stalenessOptions(t, t.TempDir(), `{"max-staleness": 1}`))
	for _, tt := range []struct {
		name, metric string
		forge        func(*schemas.Trajectory)
	}{
		{"stale", "stale_refused", func(*schemas.Trajectory) {}},
		{"huge rewards", "refused_trajectories", func(tr *schemas.Trajectory) {
			tr.PolicyVersion = 1 // the version asked of: only the rewards are wrong
			tr.Steps = append(tr.Steps, tr.Steps[0], tr.Steps[0])
			for i := range tr.Steps {
				tr.Steps[i].Reward = 1e308
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := streamstest.RunServer(t)
			_, js := streamstest.Connect(t, s)
			cfg, err := stalenessOptions(t, t.TempDir(), `{"max-staleness": 1}`).Config()
			if err != nil {
				t.Fatal(err)
			}
			cfg.NATSURL, cfg.Logger, cfg.Learner.RolloutTimeout = s.ClientURL(), smallRun(t, "", false).Logger, time.Minute
			var forgeErr error
			cfg.Progress = func(p learnersvc.Progress) {
				if p.Update == 1 {
					forged := forgedStale(t, js, cfg)
					tt.forge(forged)
					_, forgeErr = streams.PublishTrajectory(context.Background(), js, forged)
				}
			}
			sum, err := Run(context.Background(), cfg)
			if forgeErr != nil {
				t.Fatal(forgeErr)
			}
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if a, b := policyHash(t, clean), policyHash(t, sum); a != b {
				t.Errorf("final policy with the forgery %s, without %s", b, a)
			}
			vals := updateValues(t, js, cfg.Learner.Run)
			if got := vals[len(vals)-1][tt.metric]; got != 1 {
				t.Errorf("%s %v, want 1", tt.metric, got)
			}
			if dl := deadLetters(t, js, cfg.Learner.Run, "learner"); len(dl) != 1 {
				t.Errorf("learner dead letters %q, want the forgery's", dl)
			}
		})
	}
}
