package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/llm/llmserve"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/auth"
)

// policyLibrary loads the versions a run announces on its policy.published
// events into the server, keeping the newest few. An announcement that
// cannot be the run's own — another run's event or snapshot, a version
// the run cannot have reached, a snapshot of another version, a model
// name of another version — is dead-lettered on rspo.<run>.dlq.policy
// with the reason and never served. It is used from the follower's
// goroutine only.
type policyLibrary struct {
	srv    *llmserve.Server
	js     jetstream.JetStream
	run    string
	keep   int
	alias  string
	log    *slog.Logger
	loaded []string // model names, oldest first
	newest int64
	gone   goneVersions
}

// goneVersions counts the announced versions whose snapshots are no
// longer stored, until they are reported.
type goneVersions struct {
	n              int
	oldest, newest int64
}

func (g *goneVersions) add(v int64) {
	if g.n == 0 || v < g.oldest {
		g.oldest = v
	}
	if g.n == 0 || v > g.newest {
		g.newest = v
	}
	g.n++
}

// policyDeadLetters names `rspo serve policy` in dead-letter subjects:
// the stage name its user may dead-letter under.
const policyDeadLetters = auth.Policy

// follow serves every version announced on the run's policy.published,
// from the start of RSPO_CTRL, until ctx ends (nil) or the events cannot
// be read.
func (l *policyLibrary) follow(ctx context.Context) error {
	subject := streams.Subjects(l.run).Ctrl(schemas.EventPolicyPublished)
	err := streams.Follow(ctx, l.js, streams.StreamCtrl, subject, func(msg jetstream.Msg) { l.take(ctx, msg) })
	if err != nil {
		return fmt.Errorf("serve policy: %w", err)
	}
	return nil
}

// take handles one announcement: serves it, or dead-letters it with the
// reason. Once the follower has caught up with the stream it reports the
// versions whose snapshots were gone in one line.
func (l *policyLibrary) take(ctx context.Context, msg jetstream.Msg) {
	var seq, pending uint64
	if md, err := msg.Metadata(); err == nil {
		seq, pending = md.Sequence.Stream, md.NumPending
	}
	if reason := l.add(ctx, msg.Data(), seq); reason != "" {
		l.log.Warn("policy.published dead-lettered, not served", "reason", reason)
		if err := streams.RecordDeadLetter(ctx, l.js, msg, policyDeadLetters, reason); err != nil && ctx.Err() == nil {
			l.log.Error("dead-letter failed", "reason", reason, "err", err)
		}
	}
	if pending == 0 {
		l.reportGone()
	}
}

// add loads and serves the version announced by data, the event stored at
// stream sequence seq. It returns why the announcement is not the run's
// own ("" for one that is, served or not).
func (l *policyLibrary) add(ctx context.Context, data []byte, seq uint64) (reason string) {
	e, reason := l.check(data, seq)
	if reason != "" {
		return reason
	}
	object := cmp.Or(e.Object, streams.PolicyObject(l.run, e.PolicyVersion))
	b, err := streams.GetSnapshot(ctx, l.js, streams.BucketPolicy, object)
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound):
		l.gone.add(e.PolicyVersion) // the learner keeps the newest few
		return ""
	case err != nil:
		if ctx.Err() == nil {
			l.log.Warn("announced policy not loaded", "version", e.PolicyVersion, "object", object, "err", err)
		}
		return ""
	}
	p, err := policy.Load(b)
	switch {
	case err != nil: // an external trainer's weights need a server of their own
		l.log.Warn("announced snapshot is not a built-in policy; not served", "version", e.PolicyVersion, "object", object, "err", err)
		return ""
	case p.Version() != e.PolicyVersion:
		return fmt.Sprintf("the snapshot %s holds policy version %d, the event announces version %d", object, p.Version(), e.PolicyVersion)
	}
	l.serve(cmp.Or(e.Model, schemas.DefaultModelName(l.run, e.PolicyVersion)), e.PolicyVersion, p)
	return ""
}

// check decodes the announcement data, stored at stream sequence seq,
// and says why it cannot be the run's ("" when it can).
func (l *policyLibrary) check(data []byte, seq uint64) (schemas.Event, string) {
	e, err := schemas.DecodeEvent(data)
	if err == nil && (e.Run != l.run || e.Type != schemas.EventPolicyPublished) {
		err = fmt.Errorf("%s event of run %q", e.Type, e.Run)
	}
	if err != nil {
		return e, fmt.Sprintf("not a policy.published event of run %q: %v", l.run, err)
	}
	return e, l.foreign(e, seq)
}

// foreign says why e, stored at stream sequence seq, cannot announce a
// version of the run ("" when it can). A run announces its versions in
// order, one per update from version 0, each after the one it was trained
// from, so version v comes after at least v earlier messages of RSPO_CTRL,
// whose sequence numbers only grow: a version above the event's own
// sequence number is one the run cannot have reached.
func (l *policyLibrary) foreign(e schemas.Event, seq uint64) string {
	if e.Object != "" && !strings.HasPrefix(e.Object, l.run+"/") {
		return fmt.Sprintf("the object %q is not run %q's: its snapshots are %s/v…", e.Object, l.run, l.run)
	}
	if seq > 0 && uint64(e.PolicyVersion) > seq {
		return fmt.Sprintf("policy version %d is impossible: a run announces each version after the one it was trained from, and this announcement is message %d of %s",
			e.PolicyVersion, seq, streams.StreamCtrl)
	}
	if v, ok := defaultModelVersion(l.run, e.Model); ok && v != e.PolicyVersion {
		return fmt.Sprintf("the model name %q is the name of version %d, the event announces version %d", e.Model, v, e.PolicyVersion)
	}
	return ""
}

// defaultModelVersion reads the version out of a model name of the form
// schemas.DefaultModelName(run, v).
func defaultModelVersion(run, model string) (int64, bool) {
	digits, ok := strings.CutPrefix(model, run+"-v")
	if !ok || digits == "" {
		return 0, false
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || schemas.DefaultModelName(run, v) != model {
		return 0, false
	}
	return v, true
}

// reportGone logs, in one line, the announced versions whose snapshots
// were no longer stored: on a long finished run, most of them.
func (l *policyLibrary) reportGone() {
	if l.gone.n == 0 {
		return
	}
	l.log.Info("announced policy versions not served: their snapshots are no longer stored (the learner keeps the newest few)",
		"versions", l.gone.n, "oldest", l.gone.oldest, "newest", l.gone.newest)
	l.gone = goneVersions{}
}

func (l *policyLibrary) serve(name string, v int64, p *policy.Policy) {
	l.srv.Serve(name, p)
	l.loaded = append(slices.DeleteFunc(l.loaded, func(n string) bool { return n == name }), name)
	for len(l.loaded) > l.keep {
		l.srv.Remove(l.loaded[0])
		l.loaded = l.loaded[1:]
	}
	if v > l.newest {
		l.newest = v
		if l.alias != "" {
			l.srv.Serve(l.alias, p)
		}
	}
	l.log.Info("policy served", "model", name, "version", v)
}
