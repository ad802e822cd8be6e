// Package auth generates least-privilege credentials for rspo runs: a NATS
// server configuration with one account per run and, in it, one NKey user
// per stage whose permissions allow exactly the subjects that stage needs,
// plus an administrator per run who may create the streams and buckets.
//
// Runs are isolated by accounts rather than by subject permissions alone:
// the streams, buckets and inboxes of one account are invisible to every
// other, so a stage of run A can neither read nor write anything of run B
// however it names it. Inside an account, each stage is restricted to its
// own run's subjects (rspo.<run>.…) and to the JetStream calls it makes.
// docs/security.md lists the permissions and the reasons for them.
package auth

import (
	"fmt"
	"slices"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// Stage names, as `rspo serve NAME` takes them, and the administrator.
const (
	Actor    = "actor"
	Explorer = "explorer"
	Swapper  = "swapper"
	Buffer   = "buffer"
	Learner  = "learner"
	Trainer  = "trainer"
	PRM      = "prm"
	Policy   = "policy"
	Admin    = "admin"
)

// Stages lists the stages that get a user of their own, in the order of
// the stage table, followed by the administrator. Policy is `rspo serve
// policy`, the OpenAI-compatible server of a run's built-in policies.
func Stages() []string {
	return []string{Actor, Explorer, Swapper, Buffer, Learner, Trainer, PRM, Policy, Admin}
}

// Permissions are what one user may do: publish to and subscribe to the
// subjects listed (NATS wildcards allowed), and reply to requests it has
// received when AllowResponses is set (the micro services).
type Permissions struct {
	Publish        []string
	Subscribe      []string
	AllowResponses bool
}

// Account returns the NATS account of a run: "rspo-<run>".
func Account(run string) string { return "rspo-" + run }

// StagePermissions returns the permissions of stage's user in run's account.
func StagePermissions(run, stage string) (Permissions, error) {
	if err := streams.ValidateRun(run); err != nil {
		return Permissions{}, fmt.Errorf("auth: %w", err)
	}
	build, ok := stagePerms[stage]
	if !ok {
		return Permissions{}, fmt.Errorf("auth: no stage %q; the stages are %v", stage, Stages())
	}
	g := build(streams.Subjects(run))
	g.add(common(run, stage))
	return g.permissions(), nil
}

// grant collects subjects while a stage's permissions are built.
type grant struct {
	pub, sub  []string
	responses bool
}

func (g *grant) add(o grant) {
	g.pub = append(g.pub, o.pub...)
	g.sub = append(g.sub, o.sub...)
	g.responses = g.responses || o.responses
}

func (g grant) permissions() Permissions {
	clean := func(s []string) []string {
		s = slices.Clone(s)
		slices.Sort(s)
		return slices.Compact(s)
	}
	return Permissions{Publish: clean(g.pub), Subscribe: clean(g.sub), AllowResponses: g.responses}
}

func grants(gs ...grant) grant {
	var g grant
	for _, o := range gs {
		g.add(o)
	}
	return g
}

func pub(subjects ...string) grant { return grant{pub: subjects} }

// stagePerms builds each stage's permissions from its run's subjects.
var stagePerms = map[string]func(streams.RunSubjects) grant{
	Actor: func(s streams.RunSubjects) grant {
		// policy.published: an actor (or explorer) playing through an
		// inference server (--policy openai) follows it for each version's
		// model name. Evaluation shards (the learner's --eval-shards) come on
		// work.eval and are answered on eval.<update>.
		return grants(consume(streams.StreamWork, s.WorkRollout), pub(s.TrajOnPolicy),
			consume(streams.StreamWork, s.WorkEval), pub(s.EvalAll),
			readObjects(streams.BucketPolicy), replay(streams.StreamCtrl, s.Ctrl(schemas.EventPolicyPublished)))
	},
	// The explorer, the swapper and the buffer read the learner's cycle
	// record, against which they check every cycle event.
	Explorer: func(s streams.RunSubjects) grant {
		return grants(consume(streams.StreamWork, s.WorkExplore), replay(streams.StreamCtrl, s.Ctrl(schemas.EventCycleStarted)),
			readState(streams.CycleRecordKey(s.Run)),
			pub(s.TrajExplore, s.Ctrl(schemas.EventCycleExplored), s.Metrics(Explorer)),
			readObjects(streams.BucketPolicy), readObjects(streams.BucketPRM),
			replay(streams.StreamCtrl, s.Ctrl(schemas.EventPolicyPublished))) // --policy openai, as the actor
	},
	Swapper: func(s streams.RunSubjects) grant {
		return grants(consume(streams.StreamTraj, s.TrajExplore), replay(streams.StreamCtrl, s.Ctrl(schemas.EventCycleStarted)),
			readState(streams.CycleRecordKey(s.Run)), pub(s.Swapped))
	},
	Buffer: func(s streams.RunSubjects) grant {
		return grants(consume(streams.StreamSwapped, s.Swapped), consume(streams.StreamCtrl, s.Ctrl(schemas.EventCycleEnded)),
			replay(streams.StreamSwapped, s.Swapped), replay(streams.StreamCtrl, s.Ctrl(schemas.EventCycleEnded)),
			service(s.BufferSample, s.BufferStats),
			// every cycle.started, dead-lettered unless the learner's record holds it
			consume(streams.StreamCtrl, s.Ctrl(schemas.EventCycleStarted)), readState(streams.CycleRecordKey(s.Run)))
	},
	Learner: func(s streams.RunSubjects) grant {
		return grants(replay(streams.StreamTraj, s.Traj(">")), replay(streams.StreamSwapped, s.Swapped),
			replay(streams.StreamCtrl, s.CtrlAll), replay(streams.StreamDLQ, s.DLQAll), // the trainer's refusals of its batches
			replay(streams.StreamEval, s.EvalAll), // the actors' answers to its evaluation shards
			pub(s.WorkRollout, s.WorkExplore, s.WorkEval, s.CtrlAll, s.Metrics(Learner), s.Metrics(PRM), s.BufferSample, s.BufferStats, s.Batch),
			writeObjects(streams.BucketPolicy), writeObjects(streams.BucketPRM),
			writeState(streams.StateKey(s.Run, "learner", ">"), streams.StateKey(s.Run, "pipeline", ">")))
	},
	// The external trainer: the learner's batches in, policy snapshots (and
	// the trainer state beside them) and their announcements out.
	Trainer: func(s streams.RunSubjects) grant {
		return grants(consume(streams.StreamBatch, s.Batch),
			pub(s.Ctrl(schemas.EventPolicyPublished)),
			writeObjects(streams.BucketPolicy))
	},
	PRM: func(s streams.RunSubjects) grant {
		return grants(replay(streams.StreamCtrl, s.Ctrl(schemas.EventPRMPublished)), readObjects(streams.BucketPRM),
			service(s.PRMScore))
	},
	// `rspo serve policy`: follows the announced versions, reads their
	// snapshots, and dead-letters a forged announcement (common). It may
	// announce nothing and write no snapshot.
	Policy: func(s streams.RunSubjects) grant {
		return grants(replay(streams.StreamCtrl, s.Ctrl(schemas.EventPolicyPublished)), readObjects(streams.BucketPolicy))
	},
	Admin: func(streams.RunSubjects) grant {
		return grant{pub: []string{"$JS.API.>", "$JS.ACK.>", "$JS.FC.>", "$O.>", "$KV.>", streams.SubjectPrefix + ".>"},
			sub: []string{streams.SubjectPrefix + ".>"}}
	},
}

// common is what every user needs: the account check Connect makes, the
// stream lookups of streams.Ensure, its replies, and its dead-letter subject.
func common(run, stage string) grant {
	return grant{
		pub: []string{api("INFO"), api("STREAM.INFO.*"), streams.Subjects(run).DLQ(stage)},
		sub: []string{"_INBOX.>"},
	}
}

func api(s string) string { return "$JS.API." + s }

// consume is a durable pull consumer on stream, filtered to filter: it may
// be created with exactly that filter, fetched from, and acknowledged.
func consume(stream, filter string) grant {
	return pub(api("CONSUMER.CREATE."+stream+".*."+filter), api("CONSUMER.INFO."+stream+".*"),
		api("CONSUMER.MSG.NEXT."+stream+".*"), "$JS.ACK."+stream+".>")
}

// replay is an ordered consumer (streams.Replay): created with the filter,
// fetched from, and deleted when the replay is done.
func replay(stream, filter string) grant {
	// STREAM.MSG.GET: a replay reads up to the last message its stream's
	// leader holds on the filter (a replica may still be catching up).
	return pub(api("CONSUMER.CREATE."+stream+".*."+filter), api("CONSUMER.INFO."+stream+".*"),
		api("CONSUMER.MSG.NEXT."+stream+".*"), api("CONSUMER.DELETE."+stream+".*"), api("STREAM.MSG.GET."+stream))
}

// readObjects reads snapshots from an object store: the object's metadata
// by direct get, its chunks with an ordered push consumer (flow control).
func readObjects(bucket string) grant {
	st := "OBJ_" + bucket
	return pub(api("DIRECT.GET."+st+".>"), api("STREAM.MSG.GET."+st),
		api("CONSUMER.CREATE."+st+".*.$O."+bucket+".C.>"), api("CONSUMER.DELETE."+st+".*"), "$JS.FC."+st+".>")
}

// writeObjects reads, stores and deletes snapshots in an object store.
func writeObjects(bucket string) grant {
	return grants(readObjects(bucket), pub("$O."+bucket+".>", api("STREAM.PURGE.OBJ_"+bucket)))
}

// writeState reads and writes the state bucket's keys matching the given
// key patterns.
func writeState(keys ...string) grant {
	var g grant
	for _, k := range keys {
		subj := "$KV." + streams.BucketState + "." + k
		g.add(pub(subj, api("DIRECT.GET.KV_"+streams.BucketState+"."+subj)))
	}
	return g
}

// readState reads (only) the state bucket's given keys.
func readState(keys ...string) grant {
	var g grant
	for _, k := range keys {
		g.add(pub(api("DIRECT.GET.KV_" + streams.BucketState + ".$KV." + streams.BucketState + "." + k)))
	}
	return g
}

// service is a micro service answering on endpoints: it subscribes to
// them and to the discovery subjects, and replies to its requests.
func service(endpoints ...string) grant {
	return grant{sub: append(slices.Clone(endpoints), "$SRV.>"), responses: true}
}
