package learnersvc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/producers"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// validateEvalShards checks EvalShards of the defaulted configuration: at
// least 1, at most the EvalEpisodes of an evaluation (no shard is empty),
// and shards small enough for one message.
func (c Config) validateEvalShards() error {
	switch {
	case c.EvalShards < 1:
		return fmt.Errorf("learnersvc: eval shards %d: want at least 1 (1: the learner evaluates in-process)", c.EvalShards)
	case c.EvalShards == 1:
		return nil
	case c.EvalShards > c.EvalEpisodes:
		return fmt.Errorf("learnersvc: eval shards %d: an evaluation has %d episodes (eval episodes), so at most %d shards",
			c.EvalShards, c.EvalEpisodes, c.EvalEpisodes)
	case c.EvalEpisodes > schemas.MaxEvalEpisodes:
		return fmt.Errorf("learnersvc: eval episodes %d: an evaluation in shards has at most %d", c.EvalEpisodes, schemas.MaxEvalEpisodes)
	}
	if most := (c.EvalEpisodes + c.EvalShards - 1) / c.EvalShards; most > schemas.MaxEvalShardEpisodes {
		least := (c.EvalEpisodes + schemas.MaxEvalShardEpisodes - 1) / schemas.MaxEvalShardEpisodes
		return fmt.Errorf("learnersvc: eval shards %d: %d episodes make shards of %d episodes, more than the %d a shard holds; use at least %d shards",
			c.EvalShards, c.EvalEpisodes, most, schemas.MaxEvalShardEpisodes, least)
	}
	return nil
}

// evalDeadLetters is the component under which the learner dead-letters
// evaluation results it refuses: rspo.<run>.dlq.learner.
const evalDeadLetters = "learner"

// evalWaitLog is how often the learner says which shards it still waits for.
const evalWaitLog = 30 * time.Second

// evaluateSharded queues every eval split's evaluation as EvalShards work
// items for the run's actors, waits for a result of every shard and folds
// each split's results, in episode order, into its report: the report the
// in-process evaluation gives (rollout.NewReport). Shard ids are
// deterministic, so a learner that evaluates the same update again (a
// restart) queues each shard once within the dedupe window and takes the
// results already stored.
func (s *Service) evaluateSharded(ctx context.Context) ([]rollout.Report, error) {
	var all []schemas.EvalShard
	for _, split := range s.cfg.EvalSplits {
		tasks, seed, err := s.evalEpisodes(split)
		if err != nil {
			return nil, err
		}
		if len(tasks) < s.cfg.EvalShards {
			return nil, fmt.Errorf("learnersvc: eval split %s has %d episodes, fewer than its %d shards", split, len(tasks), s.cfg.EvalShards)
		}
		job := schemas.EvalShard{Run: s.cfg.Run, Update: s.cp.Update, PolicyVersion: s.cp.Version, Split: split,
			Seed: seed, Greedy: s.cfg.EvalGreedy, Env: s.cfg.Env, EnvOptions: s.cfg.EnvOptions}
		all = append(all, schemas.EvalShardsOf(job, rollout.TaskRefs(tasks), s.cfg.EvalShards)...)
	}
	for i := range all {
		all[i].Nonce = s.nonces.Eval(streams.EvalShardID(all[i]))
	}
	for _, sh := range all {
		ack, err := streams.PublishEvalShard(ctx, s.js, sh)
		if err != nil {
			return nil, fmt.Errorf("learnersvc: queue eval shard %d of %s: %w", sh.Shard, sh.Split, err)
		}
		s.queued(streams.EvalShardID(sh), ack)
	}
	s.cfg.Logger.Debug("evaluation queued", "update", s.cp.Update, "shards", len(all))
	got, err := s.awaitEvalResults(ctx, all)
	if err != nil {
		return nil, err
	}
	reports := make([]rollout.Report, len(s.cfg.EvalSplits))
	for i, split := range s.cfg.EvalSplits {
		reports[i] = rollout.NewReport(s.env, got.episodes(split))
	}
	return reports, nil
}

// awaitEvalResults reads the results on rspo.<run>.eval.<update> until
// every shard has one. A result that does not answer one of the shards —
// another run, update, version, split or episode range, more or fewer
// episodes than its shard's, task types the shard did not give — or a
// second result of a shard already answered is dead-lettered with the
// reason, counted as ignored and left out of the figures. It waits until
// ctx ends: a shard whose actor died is redelivered to another after its
// ack wait, and evaluation figures are exact or not given. A shard an actor
// dead-letters (one no actor of the run can play: an actor whose backend
// cannot evaluate, an environment it cannot build, a shard over its step
// budget) is never answered, so the wait ends with a permanent error
// naming the actor's reason instead of hanging.
func (s *Service) awaitEvalResults(ctx context.Context, shards []schemas.EvalShard) (*evalResults, error) {
	got := newEvalResults(shards, evalLimitsOf(s.env))
	var answered atomic.Int64
	start := time.Now()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	refused := make(chan string, 1)
	what := shardsWaitedFor(shards)
	defer s.settled(what)
	go s.watchActorDeadLetters(wctx, s.queuedAs(what), refused, cancel)
	go func() {
		t := time.NewTicker(evalWaitLog)
		defer t.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-t.C:
				s.cfg.Logger.Warn("waiting for evaluation shards: are actors serving the run?", "update", s.cp.Update,
					"answered", answered.Load(), "shards", len(shards), "waited", time.Since(start).Round(time.Second))
			}
		}
	}()
	err := streams.Replay(wctx, s.js, streams.ReplayOptions{Run: s.cfg.Run, Subject: streams.EvalKind(s.cp.Update), Follow: true},
		func(m streams.Message) error {
			if reason := got.add(m); reason != "" {
				s.ignored++
				s.cfg.Logger.Warn("dead-lettering an evaluation result", "update", s.cp.Update, "seq", m.Seq, "reason", reason)
				if err := streams.RecordReplayedDeadLetter(ctx, s.js, m, evalDeadLetters, reason); err != nil {
					s.cfg.Logger.Error("evaluation result not dead-lettered", "seq", m.Seq, "err", err)
				}
			}
			answered.Store(int64(len(got.got)))
			if got.complete() {
				return errFound
			}
			return nil
		})
	switch {
	case errors.Is(err, errFound):
		return got, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	select {
	case why := <-refused:
		return nil, permanent(fmt.Errorf("learnersvc: evaluation of update %d: %s", s.cp.Update, why))
	default:
	}
	if err == nil {
		err = errors.New("the results' replay ended")
	}
	return nil, fmt.Errorf("learnersvc: evaluation of update %d: %w", s.cp.Update, err)
}

// shardsWaitedFor names the evaluation's shards by message id, for
// watchActorDeadLetters.
func shardsWaitedFor(shards []schemas.EvalShard) map[string]string {
	what := make(map[string]string, len(shards))
	for _, sh := range shards {
		what[streams.EvalShardID(sh)] = fmt.Sprintf("shard %d of %d of %s", sh.Shard, sh.Shards, sh.Split)
	}
	return what
}

// queued records the RSPO_WORK sequence of the work message id that ack
// acknowledges: for a duplicate within the dedupe window, the message
// first queued under that id.
func (s *Service) queued(id string, ack *jetstream.PubAck) {
	if s.workSeqs == nil {
		s.workSeqs = map[string]uint64{}
	}
	s.workSeqs[id] = ack.Sequence
}

// queuedAs returns the work items of what with the sequences they were
// queued under (0 where this process did not queue it).
func (s *Service) queuedAs(what map[string]string) map[string]workItem {
	items := make(map[string]workItem, len(what))
	for id, desc := range what {
		items[id] = workItem{desc: desc, seq: s.workSeqs[id]}
	}
	return items
}

// settled forgets the sequences of work no longer waited for.
func (s *Service) settled(what map[string]string) {
	for id := range what {
		delete(s.workSeqs, id)
	}
}

// workItem is a queued work message the learner waits on: what it is,
// and its sequence in RSPO_WORK.
type workItem struct {
	desc string
	seq  uint64
}

// watchActorDeadLetters reads the run's actor dead letters (all of them:
// a learner restarted mid-wait must see work refused before it started,
// which JetStream's deduplication will not queue again) until ctx ends,
// and on the first that is of one of items — its message id, and the
// sequence that id was queued under this time, so that a dead letter of
// an earlier message under the same id (queued again once the dedupe
// window had passed, after the cause was mended) does not count — sends
// what it is, the dead-lettering component and its reason to refused and
// calls stop.
func (s *Service) watchActorDeadLetters(ctx context.Context, items map[string]workItem, refused chan<- string, stop func()) {
	s.watchDeadLetters(ctx, producers.Component, items, refused, stop)
}

// watchDeadLetters is watchActorDeadLetters for the dead letters of
// component's stage.
func (s *Service) watchDeadLetters(ctx context.Context, component string, items map[string]workItem, refused chan<- string, stop func()) {
	_ = streams.Replay(ctx, s.js, streams.ReplayOptions{Run: s.cfg.Run, Subject: streams.KindDLQ + streams.SubjectKind("."+component), Follow: true},
		func(m streams.Message) error {
			item, ok := items[m.Headers.Get(streams.HeaderDLQMsgID)]
			if !ok || item.seq != 0 && m.Headers.Get(streams.HeaderDLQSeq) != strconv.FormatUint(item.seq, 10) {
				return nil
			}
			refused <- fmt.Sprintf("%s was dead-lettered by the %s: %s (no %s will take it)",
				item.desc, m.Headers.Get(streams.HeaderDLQComponent), m.Headers.Get(streams.HeaderDLQReason), component)
			stop()
			return errFound
		})
}

// evalResults collects the answers to one evaluation's shards: the first
// valid result of each shard counts. A result that does not echo its
// shard's nonce, or with figures no episode of the environment can have,
// is not valid: a forgery published ahead of the actor's result cannot
// make the actor's a duplicate.
type evalResults struct {
	shards map[evalKey]schemas.EvalShard
	got    map[evalKey]schemas.EvalResult
	// counts are the shard counts of the evaluated splits.
	counts map[string]int
	limits evalLimits
}

type evalKey struct {
	split string
	shard int
}

func newEvalResults(shards []schemas.EvalShard, limits evalLimits) *evalResults {
	r := &evalResults{shards: map[evalKey]schemas.EvalShard{}, got: map[evalKey]schemas.EvalResult{}, counts: map[string]int{},
		limits: limits}
	for _, sh := range shards {
		r.shards[evalKey{sh.Split, sh.Shard}] = sh
		r.counts[sh.Split] = sh.Shards
	}
	return r
}

// add takes the result m carries, or returns why it cannot (the reason it
// is dead-lettered with).
func (r *evalResults) add(m streams.Message) (reason string) {
	if m.EvalResult == nil {
		return fmt.Sprintf("not a valid eval result: %v", m.Err)
	}
	res := *m.EvalResult
	key := evalKey{res.Split, res.Shard}
	want, ok := r.shards[key]
	if !ok {
		if n, split := r.counts[res.Split]; split {
			return fmt.Sprintf("eval result of shard %d of %d of split %s: the evaluation has %d shards of it", res.Shard, res.Shards, res.Split, n)
		}
		return fmt.Sprintf("eval result of split %q, which this evaluation does not evaluate", res.Split)
	}
	if err := r.limits.check(res); err != nil {
		return fmt.Sprintf("eval result of shard %d of %s at update %d has impossible figures: %v", want.Shard, want.Split, want.Update, err)
	}
	if err := res.Answers(want); err != nil {
		return fmt.Sprintf("eval result does not answer shard %d of %s at update %d: %v", want.Shard, want.Split, want.Update, err)
	}
	if first, dup := r.got[key]; dup {
		same := "the same figures"
		if !slices.Equal(first.Results, res.Results) {
			same = "different figures"
		}
		return fmt.Sprintf("a second eval result of shard %d of %s (by %s, with %s): the first, by %s, counts", res.Shard, res.Split, res.Evaluator, same, first.Evaluator)
	}
	r.got[key] = res
	return ""
}

// complete says whether every shard has its result.
func (r *evalResults) complete() bool { return len(r.got) == len(r.shards) }

// episodes returns the results of split's episodes, in episode order.
func (r *evalResults) episodes(split string) []rollout.EpisodeResult {
	var out []rollout.EpisodeResult
	for k := range r.counts[split] {
		out = append(out, rollout.EpisodeResults(r.got[evalKey{split, k}].Results)...)
	}
	return out
}
