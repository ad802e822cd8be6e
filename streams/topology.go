package streams

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Stream names of the protocol. Each captures its subjects for every run.
const (
	StreamTraj    = "RSPO_TRAJ"
	StreamSwapped = "RSPO_SWAPPED"
	StreamWork    = "RSPO_WORK"
	StreamCtrl    = "RSPO_CTRL"
	StreamMetrics = "RSPO_METRICS"
	StreamDLQ     = "RSPO_DLQ"
	StreamBatch   = "RSPO_BATCH"
	StreamEval    = "RSPO_EVAL"
)

// Bounds of StreamBatch: a training batch is needed until its trainer has
// applied it, so the stream keeps a day of them and at most the latest
// BatchMaxPerRun of each run (a count, not bytes: JetStream would reserve
// a byte bound on the server's store up front).
const (
	BatchMaxAge    = 24 * time.Hour
	BatchMaxPerRun = 64
)

// Bucket names of the protocol.
const (
	// BucketPolicy is the object store of policy snapshots (see PolicyObject).
	BucketPolicy = "rspo_policy"
	// BucketPRM is the object store of PRM snapshots (see PRMObject).
	BucketPRM = "rspo_prm"
	// BucketState is the key-value bucket of service state such as learner
	// checkpoints (see StateKey).
	BucketState = "rspo_state"
)

// StreamSpec describes one stream of the topology, independent of sizing.
type StreamSpec struct {
	// Name is the JetStream stream name.
	Name string
	// Subjects are the subject filters the stream captures (all runs).
	Subjects []string
	// Retention is LimitsPolicy for history streams, WorkQueuePolicy for work.
	Retention jetstream.RetentionPolicy
	// Dedupe says whether the stream keeps a duplicate window for Nats-Msg-Id.
	Dedupe bool
	// Description is stored with the stream.
	Description string
	// MaxAge bounds the stream itself (0: unbounded); Options may only
	// tighten it. MaxMsgsPerSubject keeps only that many latest messages
	// of each subject (0: all).
	MaxAge            time.Duration
	MaxMsgsPerSubject int64
}

// Topology lists the protocol's streams in the order Ensure creates them.
func Topology() []StreamSpec {
	all := func(tail string) []string { return []string{SubjectPrefix + ".*." + tail} }
	return []StreamSpec{
		{Name: StreamTraj, Subjects: all("traj.>"), Retention: jetstream.LimitsPolicy, Dedupe: true,
			Description: "rspo trajectories (onpolicy, explore), Arrow IPC"},
		{Name: StreamSwapped, Subjects: all("swapped"), Retention: jetstream.LimitsPolicy, Dedupe: true,
			Description: "rspo outcome-relabelled buffer records, Arrow IPC"},
		{Name: StreamWork, Subjects: all("work.>"), Retention: jetstream.WorkQueuePolicy, Dedupe: true,
			Description: "rspo rollout requests, explore and eval shards, JSON, work queue"},
		{Name: StreamCtrl, Subjects: all("ctrl.>"), Retention: jetstream.LimitsPolicy, Dedupe: true,
			Description: "rspo control events, JSON"},
		{Name: StreamMetrics, Subjects: all("metrics.>"), Retention: jetstream.LimitsPolicy,
			Description: "rspo metrics events, JSON"},
		{Name: StreamDLQ, Subjects: all("dlq.>"), Retention: jetstream.LimitsPolicy, Dedupe: true,
			Description: "rspo dead letters, original payload, reason in headers"},
		{Name: StreamBatch, Subjects: all("batch"), Retention: jetstream.LimitsPolicy, Dedupe: true,
			MaxAge: BatchMaxAge, MaxMsgsPerSubject: BatchMaxPerRun,
			Description: "rspo training batches for external trainers, Arrow IPC"},
		{Name: StreamEval, Subjects: all("eval.>"), Retention: jetstream.LimitsPolicy, Dedupe: true,
			Description: "rspo evaluation shard results, JSON"},
	}
}

// Options sizes the topology. A zero field leaves an existing stream's
// setting as it is and gives a new stream the default named below, so the
// zero value suits every service: unlimited history, file storage, one
// replica, a ten-minute dedupe window.
type Options struct {
	// MaxAge bounds how long a message is kept in the limits streams.
	// Default: forever (a run can be replayed at any time).
	MaxAge time.Duration
	// MaxBytes bounds each stream's size; the oldest messages are discarded
	// first. Default: unlimited.
	MaxBytes int64
	// Replicas is the number of copies in a JetStream cluster, 1..5.
	// Default 1.
	Replicas int
	// Storage is file or memory storage, for new streams and buckets only
	// (JetStream cannot change it). Default jetstream.FileStorage.
	Storage jetstream.StorageType
	// DuplicateWindow is how long JetStream remembers a Nats-Msg-Id, so a
	// retried publish within it is stored once. Default 10 minutes.
	DuplicateWindow time.Duration
}

// DefaultDuplicateWindow is the dedupe window used when Options leaves it 0.
const DefaultDuplicateWindow = 10 * time.Minute

// Validate reports every problem with the options, joined.
func (o Options) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...)))
	}
	if o.MaxAge < 0 {
		bad("max age %v is negative", o.MaxAge)
	}
	if o.MaxBytes < 0 {
		bad("max bytes %d is negative", o.MaxBytes)
	}
	if o.Replicas < 0 || o.Replicas > 5 {
		bad("replicas %d not in 1..5", o.Replicas)
	}
	if o.Storage != jetstream.FileStorage && o.Storage != jetstream.MemoryStorage {
		bad("unknown storage type %v", o.Storage)
	}
	if o.DuplicateWindow < 0 {
		bad("duplicate window %v is negative", o.DuplicateWindow)
	}
	return errors.Join(errs...)
}

func (o Options) withDefaults() Options {
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.DuplicateWindow == 0 {
		o.DuplicateWindow = DefaultDuplicateWindow
	}
	return o
}

func (s StreamSpec) config(o Options) jetstream.StreamConfig {
	c := jetstream.StreamConfig{
		Name:        s.Name,
		Description: s.Description,
		Subjects:    s.Subjects,
		Retention:   s.Retention,
		Discard:     jetstream.DiscardOld,
		MaxMsgs:     -1,
		MaxBytes:    -1,
		MaxAge:      s.maxAge(o),
		Storage:     o.Storage,
		Replicas:    o.Replicas,
	}
	if o.MaxBytes > 0 {
		c.MaxBytes = o.MaxBytes
	}
	if s.MaxMsgsPerSubject > 0 {
		c.MaxMsgsPerSubject = s.MaxMsgsPerSubject
	}
	if s.Dedupe {
		c.Duplicates = o.DuplicateWindow
	}
	return c
}

// maxAge is the stream's age bound under o: the tighter of its own and o's.
func (s StreamSpec) maxAge(o Options) time.Duration {
	if s.MaxAge > 0 && (o.MaxAge == 0 || s.MaxAge < o.MaxAge) {
		return s.MaxAge
	}
	return o.MaxAge
}

// StreamFor returns the stream that captures subject, or "" if none does.
func StreamFor(subject string) string {
	for _, s := range Topology() {
		for _, f := range s.Subjects {
			if subjectMatches(f, subject) {
				return s.Name
			}
		}
	}
	return ""
}

// subjectMatches reports whether the literal subject matches filter, which
// may contain the wildcards * and >.
func subjectMatches(filter, subject string) bool {
	ft, st := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, f := range ft {
		if f == ">" {
			return len(st) > i
		}
		if i >= len(st) || (f != "*" && f != st[i]) {
			return false
		}
	}
	return len(ft) == len(st)
}
