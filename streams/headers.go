package streams

import (
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Headers of the protocol. Every data message carries the first group.
const (
	// HeaderMsgID is JetStream's dedupe key: the trajectory or request id.
	HeaderMsgID = jetstream.MsgIDHeader
	// HeaderSchema is schemas.SchemaVersion of the payload.
	HeaderSchema = "Rspo-Schema"
	// HeaderRun is the run name.
	HeaderRun = "Rspo-Run"
	// HeaderCycle is the RSPO cycle.
	HeaderCycle = "Rspo-Cycle"
	// HeaderPolicyVersion is the policy version that acted (or is referred to).
	HeaderPolicyVersion = "Rspo-Policy-Version"
	// HeaderSource is onpolicy or explore.
	HeaderSource = "Rspo-Source"
	// HeaderContentType is the payload's media type.
	HeaderContentType = "Content-Type"
	// HeaderWarmup, with the value "prm", marks an on-policy trajectory of
	// the learner's PRM warm-up (schemas.Trajectory.PRMWarmup); other
	// trajectories do not carry it.
	HeaderWarmup = "Rspo-Warmup"
)

// Headers a dead letter carries besides the original message's headers.
const (
	// HeaderDLQReason says why the message was rejected.
	HeaderDLQReason = "Rspo-Dlq-Reason"
	// HeaderDLQComponent names the component that rejected it.
	HeaderDLQComponent = "Rspo-Dlq-Component"
	// HeaderDLQSubject is the subject the message was published on.
	HeaderDLQSubject = "Rspo-Dlq-Subject"
	// HeaderDLQStream is the stream the message was stored in.
	HeaderDLQStream = "Rspo-Dlq-Stream"
	// HeaderDLQSeq is its sequence number in that stream.
	HeaderDLQSeq = "Rspo-Dlq-Seq"
	// HeaderDLQDeliveries is how many times it was delivered to the component.
	HeaderDLQDeliveries = "Rspo-Dlq-Deliveries"
	// HeaderDLQMsgID is the original Nats-Msg-Id, if any.
	HeaderDLQMsgID = "Rspo-Dlq-Msg-Id"
)

// Content types of the payloads.
const (
	ContentTypeArrow = "application/vnd.apache.arrow.stream"
	ContentTypeJSON  = "application/json"
)

// maxHeaderValue bounds a header value written by this package; longer
// reasons are cut.
const maxHeaderValue = 1024

// headerValue makes s safe as a header value: one line, bounded length.
func headerValue(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxHeaderValue {
		s = s[:maxHeaderValue-3] + "..."
	}
	return s
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// dataHeaders returns the common headers of a data message.
func dataHeaders(id, run string, cycle, policyVersion int64, source, contentType string) nats.Header {
	h := nats.Header{}
	if id != "" {
		h.Set(HeaderMsgID, id)
	}
	h.Set(HeaderRun, run)
	h.Set(HeaderCycle, itoa(cycle))
	h.Set(HeaderPolicyVersion, itoa(policyVersion))
	if source != "" {
		h.Set(HeaderSource, source)
	}
	h.Set(HeaderContentType, contentType)
	return h
}
