package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/swapper/swappertest"
)

// injection is one kind of message the chaos harness publishes into a
// run besides the stages' own: malformed, or well-formed and hostile
// (what an outsider with one stage's credentials, or none where auth is
// off, can send). Each must end on the dead-letter stream, dead-lettered
// by stage, once, and change nothing the other invariants check.
type injection struct {
	name  string
	stage string
	// message returns the i-th message of the kind, its sizes drawn from
	// rng, or nil when the run is where none can be made (an evaluation
	// to answer, a cycle to forge, lies behind the learner).
	message func(c *chaosCluster, rng *rand.Rand, i int) *nats.Msg
}

// injections is everything the chaos suite injects. A defence against a
// hostile message adds the message here, with the stage that must
// dead-letter it. Not here: on-policy trajectories published ahead of
// their request under guessed ids (with huge rewards, say) — the learner
// passes over trajectories that answer none of its requests without
// dead-lettering them, so this list's invariant cannot count them (its
// own tests do: TestPrePublishedOnPolicyTrajectoriesAreNotTrainedOn).
var injections = []injection{
	{name: "garbage on traj.explore", stage: "swapper", message: garbage(func(s streams.RunSubjects) string { return s.TrajExplore })},
	{name: "garbage on work.rollout", stage: "actor", message: garbage(func(s streams.RunSubjects) string { return s.WorkRollout })},
	{name: "garbage on swapped", stage: "buffer", message: garbage(func(s streams.RunSubjects) string { return s.Swapped })},
	{name: "rollout request over the budget", stage: "actor", message: hugeRequest},
	{name: "cycle.started of a far cycle", stage: "buffer", message: farCycle(schemas.EventCycleStarted)},
	{name: "cycle.ended of a far cycle", stage: "buffer", message: farCycle(schemas.EventCycleEnded)},
	{name: "another plan for a started cycle", stage: "buffer", message: replannedCycle},
	{name: "cycle.started under the learner's next id", stage: "buffer", message: squattedCycle},
	{name: "explore shard of a far cycle", stage: "explorer", message: farShard},
	{name: "explore record under a guessed id", stage: "swapper", message: squattedRecord},
	{name: "eval result without the nonce", stage: "learner", message: forgedEvalResult},
}

// headerInjection names the injection of every injected message
// ("<name>/<i>"); dead letters keep their message's headers, so it says
// which injection a dead letter is. (Message ids cannot: some
// injections take the id of a message a stage will send.)
const headerInjection = "Chaos-Injection"

// injectionOf returns the injection a dead letter's headers name, if any.
func injectionOf(h nats.Header) (injection, bool) {
	name, _, ok := strings.Cut(h.Get(headerInjection), "/")
	for _, inj := range injections {
		if ok && inj.name == name {
			return inj, true
		}
	}
	return injection{}, false
}

func msgOn(subject string, data []byte, id string) *nats.Msg {
	m := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	m.Header.Set(streams.HeaderMsgID, id)
	return m
}

// garbage is an undecodable payload of random length on a subject.
func garbage(subject func(streams.RunSubjects) string) func(*chaosCluster, *rand.Rand, int) *nats.Msg {
	return func(c *chaosCluster, rng *rand.Rand, i int) *nats.Msg {
		data := fmt.Appendf(nil, "not a payload %d %s", i, strings.Repeat("x", rng.IntN(4096)))
		return msgOn(subject(streams.Subjects(c.run)), data, "")
	}
}

// hugeRequest is a valid rollout request of random size, every size of
// it over an actor's default step budget: at least 64 tasks × 64 rollouts
// of 30-step episodes.
func hugeRequest(c *chaosCluster, rng *rand.Rand, i int) *nats.Msg {
	tasks := make([]schemas.TaskRef, 64+rng.IntN(schemas.MaxRolloutTasks-63))
	for k := range tasks {
		tasks[k] = schemas.TaskRef{ID: fmt.Sprintf("household/train/%d", k), Type: "pick_and_place", Split: envs.SplitTrain, Seed: int64(k)}
	}
	req := schemas.RolloutRequest{ID: fmt.Sprintf("huge-%d", i), Run: c.run, Source: schemas.SourceOnPolicy, Env: "household",
		EnvOptions: map[string]string{"preset": "easy"}, Tasks: tasks, GroupSize: 64 + rng.IntN(1024-63)}
	return jsonMsg(c, streams.Subjects(c.run).WorkRollout, req)
}

// farCycle is a cycle event of a cycle far beyond the run's, its plan
// (for a cycle.started) of random size.
func farCycle(typ schemas.EventType) func(*chaosCluster, *rand.Rand, int) *nats.Msg {
	return func(c *chaosCluster, rng *rand.Rand, i int) *nats.Msg {
		e := schemas.Event{Type: typ, Run: c.run, Cycle: 1000 + rng.Int64N(1<<62), Time: time.Now().UTC()}
		if typ == schemas.EventCycleStarted {
			e.Config = randomPlan(rng)
		}
		return jsonMsg(c, streams.Subjects(c.run).Ctrl(typ), e)
	}
}

// replannedCycle is a cycle.started of a cycle the learner has started,
// with another plan: what a forger publishing after the learner would
// send to change the cycle's exploration.
func replannedCycle(c *chaosCluster, rng *rand.Rand, i int) *nats.Msg {
	u := c.progress()
	if u < 2 {
		return nil // no cycle known to be started yet
	}
	last := (u - 1) / 2 // the chaos learner's cycles are 2 updates long
	e := schemas.Event{Type: schemas.EventCycleStarted, Run: c.run, Cycle: max(0, last-rng.Int64N(4)),
		PolicyVersion: 2 * last, Config: randomPlan(rng), Time: time.Now().UTC()}
	return jsonMsg(c, streams.Subjects(c.run).Ctrl(schemas.EventCycleStarted), e)
}

// squattedCycle is a cycle.started of the learner's next cycle under the
// message id the learner's will have (streams.EventID: the cycle, the
// policy version and update at its start, the PRM version of the cycle
// now), published ahead of it so that JetStream would drop the
// learner's as a duplicate. The learner publishes its own again under an
// id of its own (streams.AnnounceCycle).
func squattedCycle(c *chaosCluster, rng *rand.Rand, i int) *nats.Msg {
	now, ok := c.learnersLatestCycle()
	if !ok {
		return nil // no cycle yet
	}
	next := now.Cycle + 1 // the chaos learner's cycles are 2 updates long
	e := schemas.Event{Type: schemas.EventCycleStarted, Run: c.run, Cycle: next, PolicyVersion: 2 * next,
		PRMVersion: now.PRMVersion, Update: 2 * next, Config: randomPlan(rng), Time: time.Now().UTC()}
	m := jsonMsg(c, streams.Subjects(c.run).Ctrl(schemas.EventCycleStarted), e)
	m.Header.Set(streams.HeaderMsgID, streams.EventID(e))
	return m
}

// learnersLatestCycle returns the learner's cycle.started of the latest
// cycle its record holds (not a forgery: the harness injects those too).
func (c *chaosCluster) learnersLatestCycle() (schemas.Event, bool) {
	rec, err := streams.LoadCycleRecord(c.ctx, c.js, c.run)
	if err != nil || rec.Latest() < 0 {
		return schemas.Event{}, false
	}
	var latest schemas.Event
	found := false
	err = streams.Replay(c.ctx, c.js, streams.ReplayOptions{Run: c.run, Subject: streams.CtrlKind(schemas.EventCycleStarted)},
		func(m streams.Message) error {
			if m.Event != nil && m.Event.Cycle == rec.Latest() && rec.Check(*m.Event) == nil {
				latest, found = *m.Event, true
			}
			return nil
		})
	return latest, err == nil && found
}

// squattedRecord is an explore record of the learner's latest cycle under
// an id its explorer would have had without the cycle's nonce, a forged
// success whose actions name indices out of the range of any list the
// environment gives: what a forger would publish ahead of the explorer to
// have the genuine record dropped as a duplicate.
func squattedRecord(c *chaosCluster, rng *rand.Rand, i int) *nats.Msg {
	now, ok := c.learnersLatestCycle()
	if !ok {
		return nil
	}
	tag, seq := fmt.Sprintf("c%d-final", now.Cycle), uint64(rng.IntN(16))
	tr := swappertest.Explorer(c.run, now.Cycle, int(seq), 1+rng.IntN(30))
	tr.ID, tr.Seq, tr.Env = schemas.TrajectoryID(c.run, schemas.SourceExplore, tag, seq), seq, "household"
	tr.GroupID, tr.Success, tr.OutcomeReward = tag+"/"+tr.TaskID, true, 1
	for k := range tr.Steps { // no list, and an index no household list reaches
		n := int32(100 + rng.IntN(1000))
		tr.Steps[k].Admissible, tr.Steps[k].NumAdmissible, tr.Steps[k].ActionIndex = nil, n, n-1
	}
	data, err := schemas.EncodeTrajectory(tr)
	if err != nil {
		return nil // refused by the encoder: nothing to inject
	}
	return msgOn(streams.Subjects(c.run).TrajExplore, data, tr.ID)
}

// farShard is an explore shard of a cycle the learner never started.
func farShard(c *chaosCluster, rng *rand.Rand, i int) *nats.Msg {
	sh := schemas.ExploreShard{Run: c.run, Cycle: 1000 + rng.Int64N(1<<62), Shard: 0, Shards: 1, TaskStart: 0, TaskEnd: 1 + rng.IntN(64)}
	return jsonMsg(c, streams.Subjects(c.run).WorkExplore, sh)
}

// forgedEvalResult answers a shard of an evaluation the learner has yet to
// make (the chaos learner evaluates every 2 updates in 2 shards of 8
// episodes a split) with a success in every episode, as an actor's result
// would look but for the shard's nonce.
func forgedEvalResult(c *chaosCluster, rng *rand.Rand, i int) *nats.Msg {
	u := c.progress() + 4
	u += u % 2
	if u > int64(c.updates) {
		return nil // the run's last evaluations may be under way
	}
	k := rng.IntN(2)
	r := schemas.EvalResult{Run: c.run, Update: u, PolicyVersion: u, Split: []string{envs.SplitEvalIn, envs.SplitEvalOut}[rng.IntN(2)],
		Shard: k, Shards: 2, EpisodeStart: 4 * k, EpisodeEnd: 4*k + 4, Episodes: 8, Evaluator: "mallory"}
	for range 4 {
		r.Results = append(r.Results, schemas.EvalEpisode{Type: "pick_and_place", Success: true, Score: 1, Steps: 1 + rng.IntN(5)})
	}
	return jsonMsg(c, streams.Subjects(c.run).Eval(u), r)
}

// randomPlan is a valid cycle plan of up to 4,096 tasks.
func randomPlan(rng *rand.Rand) json.RawMessage {
	plan := schemas.CyclePlan{Env: "household", Updates: rng.IntN(schemas.MaxPlanUpdates), Seed: rng.Int64(), ExploreSettings: schemas.ExploreSettings{GroupSize: 1 + rng.IntN(1024), Collect: 1 + rng.IntN(1024), Mode: schemas.ExplorerFrozen}}
	for k := range 1 + rng.IntN(schemas.MaxRolloutTasks) {
		plan.Tasks = append(plan.Tasks, schemas.TaskRef{ID: fmt.Sprintf("household/train/%d", k), Split: envs.SplitTrain})
	}
	raw, _ := json.Marshal(plan)
	return raw
}

// jsonMsg is v as JSON on subject; its message id is set by inject.
func jsonMsg(c *chaosCluster, subject string, v any) *nats.Msg {
	data, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	return msgOn(subject, data, "")
}

// inject publishes n messages of every injection, in a shuffled order
// with random pauses, each under its own message id, so a publish retried
// across a bus restart is stored once and the count stays exact.
func (c *chaosCluster) inject(rng *rand.Rand, n int) {
	c.t.Helper()
	var order []injection
	for range n {
		order = append(order, injections...)
	}
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	published := 0
	for _, inj := range order {
		i := c.injected[inj.name]
		msg := inj.message(c, rng, i)
		if msg == nil {
			continue
		}
		msg.Header.Set(headerInjection, fmt.Sprintf("%s/%d", inj.name, i))
		if msg.Header.Get(streams.HeaderMsgID) == "" {
			msg.Header.Set(streams.HeaderMsgID, fmt.Sprintf("chaos-inject/%s/%d", strings.ReplaceAll(inj.name, " ", "-"), i))
		}
		stored, err := c.publishRetrying(msg)
		if err != nil {
			c.t.Fatalf("inject %s: %v", inj.name, err)
		}
		if !stored { // its id was taken first: nothing to dead-letter
			continue
		}
		c.injected[inj.name]++
		published++
		time.Sleep(time.Duration(rng.IntN(50)) * time.Millisecond)
	}
	c.note("injected %d messages of %d kinds", published, len(injections))
}
