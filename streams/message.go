package streams

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
)

// Message is a stored message decoded by its subject: exactly one of
// Trajectory, Event, Metrics, Rollout, Shard, EvalShard, EvalResult and
// Batch is set, unless the payload did not
// decode (Err) or the subject carries no decodable payload (dead letters,
// whose reason is in Headers). Raw is always the payload.
type Message struct {
	// Stream, Seq and Time place the message in its stream.
	Stream string
	Seq    uint64
	Time   time.Time
	// Subject is the subject it was published on.
	Subject string
	// Headers are the message headers (Rspo-*, Nats-Msg-Id, ...).
	Headers nats.Header

	Trajectory *schemas.Trajectory
	Event      *schemas.Event
	Metrics    *schemas.MetricsEvent
	Rollout    *schemas.RolloutRequest
	Shard      *schemas.ExploreShard
	EvalShard  *schemas.EvalShard
	EvalResult *schemas.EvalResult
	Batch      *schemas.TrainBatch

	// Raw is the undecoded payload.
	Raw []byte
	// Err is the decoding error, if the payload did not decode.
	Err error
}

// DecodeMessage decodes a JetStream message by the kind of its subject:
// traj.* and swapped as a trajectory, ctrl.* as an event, metrics.* as a
// metrics event, work.rollout as a rollout request, work.explore as an
// explore shard, work.eval as an evaluation shard, eval.* as an
// evaluation result.
func DecodeMessage(msg jetstream.Msg) Message {
	m := Message{Subject: msg.Subject(), Headers: msg.Headers(), Raw: msg.Data()}
	if md, err := msg.Metadata(); err == nil {
		m.Stream, m.Seq, m.Time = md.Stream, md.Sequence.Stream, md.Timestamp
	}
	m.decode()
	return m
}

// decode fills the typed field that matches m.Subject.
func (m *Message) decode() {
	switch subjectKind(m.Subject) {
	case "traj", "swapped":
		m.Trajectory, m.Err = schemas.DecodeTrajectory(m.Raw)
	case "ctrl":
		e, err := schemas.DecodeEvent(m.Raw)
		m.Event, m.Err = keep(e, err)
	case "metrics":
		e, err := schemas.DecodeMetrics(m.Raw)
		m.Metrics, m.Err = keep(e, err)
	case "work":
		switch m.Subject {
		case Subjects(RunOf(m.Subject)).WorkExplore:
			sh, err := schemas.DecodeExploreShard(m.Raw)
			m.Shard, m.Err = keep(sh, err)
		case Subjects(RunOf(m.Subject)).WorkEval:
			sh, err := schemas.DecodeEvalShard(m.Raw)
			m.EvalShard, m.Err = keep(sh, err)
		default:
			r, err := schemas.DecodeRolloutRequest(m.Raw)
			m.Rollout, m.Err = keep(r, err)
		}
	case "eval":
		r, err := schemas.DecodeEvalResult(m.Raw)
		m.EvalResult, m.Err = keep(r, err)
	case "batch":
		m.Batch, m.Err = schemas.DecodeTrainBatch(m.Raw)
	}
}

func keep[T any](v T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// subjectKind returns the token after rspo.<run>: traj, swapped, ctrl, ...
func subjectKind(subject string) string {
	tokens := strings.SplitN(subject, ".", 4)
	if len(tokens) < 3 || tokens[0] != SubjectPrefix {
		return ""
	}
	return tokens[2]
}

// messageJSON is the JSON-lines form of a Message written by `rspo replay`.
type messageJSON struct {
	Stream     string                `json:"stream"`
	Seq        uint64                `json:"seq"`
	Time       time.Time             `json:"time"`
	Subject    string                `json:"subject"`
	Headers    map[string]string     `json:"headers,omitempty"`
	Trajectory *schemas.Trajectory   `json:"trajectory,omitempty"`
	Event      *schemas.Event        `json:"event,omitempty"`
	Metrics    *schemas.MetricsEvent `json:"metrics,omitempty"`
	Rollout    *rolloutJSON          `json:"rollout,omitempty"`
	Shard      *schemas.ExploreShard `json:"explore_shard,omitempty"`
	EvalShard  *schemas.EvalShard    `json:"eval_shard,omitempty"`
	EvalResult *schemas.EvalResult   `json:"eval_result,omitempty"`
	Batch      *schemas.TrainBatch   `json:"batch,omitempty"`
	// Payload is the raw payload when nothing was decoded: as text when it
	// is valid UTF-8, else PayloadBase64 holds it.
	Payload       *string `json:"payload,omitempty"`
	PayloadBase64 []byte  `json:"payload_base64,omitempty"`
	Error         string  `json:"error,omitempty"`
}

// rolloutJSON is a rollout request as a message's JSON form shows it: its
// seeds, 64-bit, as strings, as trajectories show theirs.
type rolloutJSON struct {
	schemas.RolloutRequest
	Seed  int64         `json:"seed,string"`
	Tasks []taskRefJSON `json:"tasks"`
}

type taskRefJSON struct {
	schemas.TaskRef
	Seed int64 `json:"seed,string"`
}

func newRolloutJSON(r *schemas.RolloutRequest) *rolloutJSON {
	if r == nil {
		return nil
	}
	j := &rolloutJSON{RolloutRequest: *r, Seed: r.Seed, Tasks: make([]taskRefJSON, len(r.Tasks))}
	for i, t := range r.Tasks {
		j.Tasks[i] = taskRefJSON{TaskRef: t, Seed: t.Seed}
	}
	return j
}

// MarshalJSON writes the message as one JSON object: stream, seq, time,
// subject, headers (first value of each), the decoded record under
// "trajectory", "event", "metrics", "rollout", "explore_shard",
// "eval_shard", "eval_result" or "batch",
// and otherwise the raw payload ("payload" if UTF-8 text, else
// "payload_base64") with "error".
// The 64-bit seeds and state keys of trajectories and rollout requests
// are strings.
func (m Message) MarshalJSON() ([]byte, error) {
	j := messageJSON{
		Stream: m.Stream, Seq: m.Seq, Time: m.Time, Subject: m.Subject,
		Trajectory: m.Trajectory, Event: m.Event, Metrics: m.Metrics, Rollout: newRolloutJSON(m.Rollout),
		Shard: m.Shard, EvalShard: m.EvalShard, EvalResult: m.EvalResult,
		Batch: m.Batch,
	}
	if len(m.Headers) > 0 {
		j.Headers = make(map[string]string, len(m.Headers))
		for k := range m.Headers {
			j.Headers[k] = m.Headers.Get(k)
		}
	}
	if m.Err != nil {
		j.Error = m.Err.Error()
	}
	if m.Trajectory == nil && m.Event == nil && m.Metrics == nil && m.Rollout == nil && m.Shard == nil &&
		m.EvalShard == nil && m.EvalResult == nil && m.Batch == nil {
		if utf8.Valid(m.Raw) {
			s := string(m.Raw)
			j.Payload = &s
		} else {
			j.PayloadBase64 = m.Raw
		}
	}
	return json.Marshal(j)
}

// PRMWarmup reports whether m holds a trajectory of the learner's PRM
// warm-up: by its Rspo-Warmup header or, for runs recorded before the
// header, by the trajectory's group id.
func (m Message) PRMWarmup() bool {
	return m.Headers.Get(HeaderWarmup) != "" || m.Trajectory != nil && m.Trajectory.PRMWarmup()
}
