package pipeline

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
	"github.com/rspo-dev/rspo/swapper/swappersvc"
)

// cleanHash is the final policy of cfg run on a server of its own, with
// nothing hostile on the bus.
func cleanHash(t *testing.T, cfg Config) string {
	t.Helper()
	cfg.DataDir, cfg.NATSURL, cfg.Progress = t.TempDir(), "", nil
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return policyHash(t, sum)
}

// onPolicyRequest is the first rollout request of update u of a run
// without RSPO, as the learner makes it, with the given nonce.
func onPolicyRequest(t *testing.T, cfg Config, u int64, nonce string) schemas.RolloutRequest {
	t.Helper()
	lc := cfg.Learner.WithDefaults()
	env, err := envs.New(lc.Env, lc.EnvOptions)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := env.Tasks(envs.SplitTrain, lc.Tasks, rollout.EpisodeSeed(lc.Seed, "tasks", u))
	if err != nil {
		t.Fatal(err)
	}
	tag := "u" + itoa(u)
	return schemas.RolloutRequest{ID: tag + "-v" + itoa(u) + "-0", Run: lc.Run, Update: u, PolicyVersion: u,
		Source: schemas.SourceOnPolicy, Env: lc.Env, EnvOptions: lc.EnvOptions, GroupSize: lc.GroupSize,
		Seed: rollout.EpisodeSeed(lc.Seed, tag), Tasks: rollout.TaskRefs(tasks[:lc.ChunkTasks]), Nonce: nonce}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// hugeRewards answers episode (i, j) of req with rewards of 1e308 on
// every step: finite, so schema-valid, and enough to overflow a return.
func hugeRewards(req schemas.RolloutRequest, i, j int) *schemas.Trajectory {
	tr := &schemas.Trajectory{ID: rollout.RequestTrajectoryID(req, i, j), Run: req.Run, Source: schemas.SourceOnPolicy,
		PolicyVersion: req.PolicyVersion, Producer: "actor-x", Env: req.Env, TaskID: req.Tasks[i].ID,
		GroupID: rollout.RequestGroupID(req, req.Tasks[i]), Instruction: req.Tasks[i].Instruction, OutcomeReward: 1, Success: true}
	for range 3 {
		tr.Steps = append(tr.Steps, schemas.Step{Observation: "forged", Admissible: []string{"look", "inventory"}, NumAdmissible: 2,
			Action: "look", ActionIndex: 0, BehaviorLogProb: -0.7, Reward: 1e308})
	}
	return tr
}

// deadLetters returns the reasons of the dead letters on
// rspo.<run>.dlq.<component>.
func deadLetters(t *testing.T, js jetstream.JetStream, run string, component streams.SubjectKind) []string {
	t.Helper()
	var reasons []string
	err := streams.Replay(context.Background(), js, streams.ReplayOptions{Run: run, Subject: streams.KindDLQ + "." + component},
		func(m streams.Message) error {
			reasons = append(reasons, m.Headers.Get(streams.HeaderDLQReason))
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return reasons
}

// Row 1 of the hostile round: on-policy trajectories with rewards of
// 1e308, published under the ids the learner was going to ask for before
// it asked (an actor's credentials suffice). The learner used to train on
// them, publish a policy of non-finite weights and checkpoint it, and no
// later start could load it. Its request ids now end with a nonce nobody
// could guess, so the forgeries answer nothing, and the run trains the
// policy it trains without them.
func TestPrePublishedOnPolicyTrajectoriesAreNotTrainedOn(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	cfg := smallRun(t, t.TempDir(), false)
	want := cleanHash(t, cfg)
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	for u := range int64(cfg.Learner.Updates) {
		req := onPolicyRequest(t, cfg, u, "") // the ids as they were: no nonce
		for i := range req.Tasks {
			for j := range req.GroupSize {
				if _, err := streams.PublishTrajectory(ctx, js, hugeRewards(req, i, j)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	cfg.NATSURL = s.ClientURL()
	sum, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("run with forgeries on the bus: %v", err)
	}
	if got := policyHash(t, sum); got != want { // policyHash loads the snapshot: it is finite
		t.Errorf("final policy %s, without the forgeries %s", got, want)
	}
}

// Row 2: explore records published under the next cycle's predictable ids
// (an explorer's credentials suffice), each with an action the built-in
// policy cannot read (index −1, claiming success). JetStream kept them and
// dropped the explorer's genuine records as duplicates, and every start of
// the learner failed its update. Now the genuine records carry the cycle's
// nonce, the swapper dead-letters the forgeries as ahead of their cycle,
// and the run trains the policy it trains without them.
func TestPrePublishedExploreRecordsAreNotTrainedOn(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	cfg := smallRun(t, t.TempDir(), true)
	cfg.Learner.Trainer.Alpha = 0.25 // two cycles of two updates
	want := cleanHash(t, cfg)
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	forged := forgedCycleRecords(t, cfg, 1)
	var forgeErr error
	cfg.Progress = func(p learnersvc.Progress) {
		if p.Update == 1 { // cycle 0 is planned, cycle 1 not yet
			for _, tr := range forged {
				if _, err := streams.PublishTrajectory(ctx, js, tr); err != nil {
					forgeErr = err
				}
			}
		}
	}
	cfg.NATSURL = s.ClientURL()
	sum, err := Run(ctx, cfg)
	if forgeErr != nil {
		t.Fatal(forgeErr)
	}
	if err != nil {
		t.Fatalf("run with forged records on the bus: %v", err)
	}
	if got := policyHash(t, sum); got != want {
		t.Errorf("final policy %s, without the forgeries %s", got, want)
	}
	reasons := strings.Join(deadLetters(t, js, "t1", swappersvc.Component), "\n")
	if n := strings.Count(reasons, "published ahead of its cycle"); n != len(forged) {
		t.Errorf("%d forgeries dead-lettered as ahead of their cycle, want %d:\n%s", n, len(forged), reasons)
	}
}

// forgedCycleRecords are explore records of cycle under the ids its
// explorer gives them without a nonce (tag c<cycle>-final, one per task
// of the cycle's pool), each claiming a success with an action that is
// not in its admissible list.
func forgedCycleRecords(t *testing.T, cfg Config, cycle int64) []*schemas.Trajectory {
	t.Helper()
	lc := cfg.Learner.WithDefaults()
	env, err := envs.New(lc.Env, lc.EnvOptions)
	if err != nil {
		t.Fatal(err)
	}
	onTasks := lc.Tasks - int(float64(lc.Tasks)*lc.Trainer.Alpha+0.5)
	pool, err := env.Tasks(envs.SplitTrain, lc.K*onTasks, rollout.EpisodeSeed(lc.Seed, "cycle-tasks", cycle))
	if err != nil {
		t.Fatal(err)
	}
	tag := "c" + itoa(cycle) + "-final"
	var out []*schemas.Trajectory
	for i, task := range pool {
		out = append(out, &schemas.Trajectory{ID: schemas.TrajectoryID(lc.Run, schemas.SourceExplore, tag, uint64(i)),
			Run: lc.Run, Cycle: cycle, Source: schemas.SourceExplore, Seq: uint64(i), Producer: "explorer-x", Env: lc.Env,
			TaskID: task.ID, TaskType: task.Type, TaskSeed: task.Seed, Split: task.Split, Instruction: task.Instruction,
			GroupID: tag + "/" + task.ID, OutcomeReward: 1, Success: true,
			Steps: []schemas.Step{{Observation: "forged", Admissible: []string{"look", "inventory"}, NumAdmissible: 2,
				Action: "dance", ActionIndex: -1, BehaviorLogProb: -0.1, Reward: 0.9, DenseReward: 0.9}}})
	}
	return out
}

// Row 12: two in-process runs of one run name on one server. The second
// used to "resume" while the first trained, both exiting 0 with more
// update events than updates. The second is refused, naming the first's
// learner, and the first trains its updates alone.
func TestSecondRunOfARunNameIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	ctx := context.Background()
	cfg := smallRun(t, t.TempDir(), false)
	second := smallRun(t, t.TempDir(), false)
	cfg.NATSURL, second.NATSURL = s.ClientURL(), s.ClientURL()
	var secondErr error
	started := false
	cfg.Progress = func(p learnersvc.Progress) {
		if p.Update == 1 { // the first trains: start the second beside it
			started = true
			_, secondErr = Run(ctx, second)
		}
	}
	sum, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !started {
		t.Fatal("the second run was never started")
	}
	host, _ := os.Hostname()
	var held *learnersvc.LeaseHeldError
	if !errors.As(secondErr, &held) || held.Holder.Host != host || held.Holder.PID != os.Getpid() {
		t.Fatalf("second run: %v, want refused naming this process's learner", secondErr)
	}
	if sum.Updates != int64(cfg.Learner.Updates) {
		t.Errorf("first run made %d updates, want %d", sum.Updates, cfg.Learner.Updates)
	}
	if n := len(updateValues(t, js, "t1")); n != cfg.Learner.Updates {
		t.Errorf("%d update events for %d updates", n, cfg.Learner.Updates)
	}
	kv, err := streams.State(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, learnersvc.LeaseKey("t1")); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("the finished run's lease: %v, want it released", err)
	}
}
