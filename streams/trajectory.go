package streams

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
)

// ErrNotSwapped means PublishSwapped was given a trajectory whose Swapped
// flag is not set.
var ErrNotSwapped = errors.New("streams: trajectory is not swapped")

// PublishTrajectory encodes t (Arrow IPC, validating it) and stores it on
// rspo.<run>.traj.<source> with the protocol headers and t.ID as message
// id: publishing the same trajectory twice within the dedupe window stores
// it once (the second PubAck reports Duplicate).
func PublishTrajectory(ctx context.Context, js jetstream.JetStream, t *schemas.Trajectory) (*jetstream.PubAck, error) {
	if err := checkTrajectory(t); err != nil {
		return nil, err
	}
	return publishTrajectory(ctx, js, Subjects(t.Run).Traj(t.Source), t)
}

// PublishSwapped stores a relabelled trajectory (Swapped set) on
// rspo.<run>.swapped, with t.ID as message id.
func PublishSwapped(ctx context.Context, js jetstream.JetStream, t *schemas.Trajectory) (*jetstream.PubAck, error) {
	m, err := SwappedMsg(t)
	if err != nil {
		return nil, err
	}
	return Publish(ctx, js, m.Subject, m.Data, m.Header)
}

// SwappedMsg encodes a relabelled trajectory (Swapped set) as its message
// on rspo.<run>.swapped, with the protocol headers and t.ID as message id:
// the one form of a buffer record, whether published at once
// (PublishSwapped) or asynchronously in batches (the swapper).
func SwappedMsg(t *schemas.Trajectory) (*nats.Msg, error) {
	if err := checkTrajectory(t); err != nil {
		return nil, err
	}
	if !t.Swapped {
		return nil, fmt.Errorf("%w: %s", ErrNotSwapped, t.ID)
	}
	b, err := schemas.EncodeTrajectory(t)
	if err != nil {
		return nil, fmt.Errorf("streams: encode trajectory %s: %w", t.ID, err)
	}
	return &nats.Msg{Subject: Subjects(t.Run).Swapped, Data: b, Header: TrajectoryHeaders(t)}, nil
}

// SwappedMsgFrom is SwappedMsg for a trajectory relabelled from the
// explorer message explored, which the caller has decoded (validating it)
// into the trajectory that t relabels. It relabels explored's bytes in
// place of encoding t afresh (schemas.PatchLabels): the record is the same
// Arrow IPC stream that SwappedMsg would write. A message PatchLabels
// cannot patch is encoded as SwappedMsg does. patched reports which path
// was taken.
func SwappedMsgFrom(t *schemas.Trajectory, explored []byte) (m *nats.Msg, patched bool, err error) {
	if err := checkTrajectory(t); err != nil {
		return nil, false, err
	}
	if !t.Swapped {
		return nil, false, fmt.Errorf("%w: %s", ErrNotSwapped, t.ID)
	}
	b, err := schemas.PatchLabels(explored, t)
	if err != nil {
		m, err := SwappedMsg(t)
		return m, false, err
	}
	return &nats.Msg{Subject: Subjects(t.Run).Swapped, Data: b, Header: TrajectoryHeaders(t)}, true, nil
}

func checkTrajectory(t *schemas.Trajectory) error {
	if t == nil {
		return &schemas.ValidationError{Field: "trajectory", Reason: "nil"}
	}
	return ValidateRun(t.Run)
}

func publishTrajectory(ctx context.Context, js jetstream.JetStream, subject string, t *schemas.Trajectory) (*jetstream.PubAck, error) {
	b, err := schemas.EncodeTrajectory(t)
	if err != nil {
		return nil, fmt.Errorf("streams: encode trajectory %s: %w", t.ID, err)
	}
	return Publish(ctx, js, subject, b, TrajectoryHeaders(t))
}

// TrajectoryHeaders returns the protocol headers of a trajectory message.
func TrajectoryHeaders(t *schemas.Trajectory) nats.Header {
	h := dataHeaders(t.ID, t.Run, t.Cycle, t.PolicyVersion, string(t.Source), ContentTypeArrow)
	h.Set(HeaderSchema, itoa(schemas.SchemaVersion))
	if t.PRMWarmup() {
		h.Set(HeaderWarmup, "prm")
	}
	return h
}
