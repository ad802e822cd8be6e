package buffersvc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// queueSample queues a sample request for serveSamples, in its client's
// turn (fairQueue); a request beyond the queue's bounds gets ErrBusy.
func (s *Service) queueSample(req micro.Request) {
	if !s.samples.push(clientOf(req.Reply()), req) {
		s.respondError(req, fmt.Errorf("%w (client %s)", ErrBusy, clientOf(req.Reply())))
	}
}

// serveSamples answers the queued sample requests, one at a time (the
// store serialises samples anyway), until ctx ends.
func (s *Service) serveSamples(ctx context.Context) error {
	for {
		req, ok := s.samples.pop(ctx)
		if !ok {
			return nil
		}
		s.handleSample(req)
	}
}

// handleSample answers a SampleRequest with the records as one Arrow IPC
// stream (schemas.EncodeTrajectoryBatch), cut into parts that each fit the
// server's max payload; see HeaderPart.
func (s *Service) handleSample(req micro.Request) {
	if n := len(req.Data()); n > MaxSampleRequestBytes {
		s.respondError(req, fmt.Errorf("%w: request of %d bytes, at most %d", ErrBadRequest, n, MaxSampleRequestBytes))
		return
	}
	var sr SampleRequest
	if err := json.Unmarshal(req.Data(), &sr); err != nil {
		s.respondError(req, fmt.Errorf("%w: request is not a JSON SampleRequest: %v", ErrBadRequest, err))
		return
	}
	if err := sr.Validate(); err != nil {
		s.respondError(req, err)
		return
	}
	data, n, err := s.sampleReply(sr)
	if err != nil {
		s.respondError(req, err)
		return
	}
	parts := splitReply(data, partSize(s.nc.MaxPayload()), n)
	if len(parts) == 1 {
		s.logRespond(req.Respond(parts[0].Data, micro.WithHeaders(micro.Headers(parts[0].Header))))
		return
	}
	for _, p := range parts {
		p.Subject = req.Reply()
		if err := s.nc.PublishMsg(p); err != nil {
			s.logRespond(err)
			return
		}
	}
}

// sampleReply samples the store and joins the stored records' bytes as
// they are (format ReplyFormatRecords), copied once from the store into
// the reply: no decode and re-encode here, the client decodes each record
// once.
//
// A sample that meets a checksum mismatch (a damaged sstable) is logged,
// the store is healed from the stream (heal) and the sample is tried once
// more: it used to answer 500 "checksum mismatch" to every sample of the
// cycle, logging nothing.
func (s *Service) sampleReply(sr SampleRequest) ([]byte, int, error) {
	data, n, err := s.store.sampleReply(s.cfg.Run, sr)
	if err == nil || !pebble.IsCorruptionError(err) {
		return data, n, err
	}
	s.cfg.Logger.Error("buffersvc: the store is damaged (checksum mismatch while sampling): healing it from the stream",
		"run", s.cfg.Run, "cycle", sr.Cycle, "err", err)
	if herr := s.heal(); herr != nil {
		s.cfg.Logger.Error("buffersvc: healing the store failed", "run", s.cfg.Run, "err", herr)
		return nil, 0, errors.Join(err, herr)
	}
	return s.store.sampleReply(s.cfg.Run, sr)
}

// handleStats answers with the store's Stats and the ingest counters.
func (s *Service) handleStats(req micro.Request) {
	st, err := s.store.Stats(s.cfg.Run)
	if err != nil {
		s.respondError(req, err)
		return
	}
	st.Ingest = s.Counters()
	s.logRespond(req.RespondJSON(st))
}

// respondError sends err with its code; see RemoteError.
func (s *Service) respondError(req micro.Request, err error) {
	s.logRespond(req.Error(codeFor(err), err.Error(), nil))
}

func (s *Service) logRespond(err error) {
	if err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		s.cfg.Logger.Warn("buffersvc: reply failed", "err", err)
	}
}
