package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/streams"
)

// streamsReport is what `rspo streams --json` prints: the table output's
// content as one JSON object.
type streamsReport struct {
	Streams   []streamEntry     `json:"streams"`
	Subjects  map[string]uint64 `json:"subjects,omitempty"`
	Consumers []consumerEntry   `json:"consumers"`
	Buckets   []bucketEntry     `json:"buckets"`
}

type streamEntry struct {
	Name      string `json:"name"`
	Missing   bool   `json:"missing,omitempty"`
	Messages  uint64 `json:"messages"`
	Bytes     uint64 `json:"bytes"`
	FirstSeq  uint64 `json:"first_seq"`
	LastSeq   uint64 `json:"last_seq"`
	Consumers int    `json:"consumers"`
	Replicas  int    `json:"replicas"`
	Leader    string `json:"leader,omitempty"`
}

type consumerEntry struct {
	Stream      string `json:"stream"`
	Name        string `json:"name"`
	Filter      string `json:"filter"`
	Pending     uint64 `json:"pending"`
	AckPending  int    `json:"ack_pending"`
	Redelivered int    `json:"redelivered"`
}

type bucketEntry struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Missing bool   `json:"missing,omitempty"`
	Bytes   uint64 `json:"bytes"`
	Values  uint64 `json:"values,omitempty"`
}

// writeStreamsJSON writes the streams, per-subject counts of run (if set),
// consumers and buckets as one indented JSON object.
func writeStreamsJSON(ctx context.Context, js jetstream.JetStream, run string, out io.Writer) error {
	var rep streamsReport
	var found []jetstream.Stream
	for _, spec := range streams.Topology() {
		st, err := js.Stream(ctx, spec.Name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			rep.Streams = append(rep.Streams, streamEntry{Name: spec.Name, Missing: true})
			continue
		}
		if err != nil {
			return fmt.Errorf("stream %s: %w", spec.Name, err)
		}
		info := st.CachedInfo()
		e := streamEntry{Name: spec.Name, Messages: info.State.Msgs, Bytes: info.State.Bytes, FirstSeq: info.State.FirstSeq,
			LastSeq: info.State.LastSeq, Consumers: info.State.Consumers, Replicas: info.Config.Replicas}
		if info.Cluster != nil {
			e.Leader = info.Cluster.Leader
		}
		rep.Streams = append(rep.Streams, e)
		found = append(found, st)
	}
	if run != "" {
		subjects, err := subjectCounts(ctx, found, run)
		if err != nil {
			return err
		}
		rep.Subjects = subjects
	}
	consumers, err := consumerEntries(ctx, found, run)
	if err != nil {
		return err
	}
	rep.Consumers, rep.Buckets = consumers, bucketEntries(ctx, js)
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// subjectCounts counts the messages of every subject of run.
func subjectCounts(ctx context.Context, found []jetstream.Stream, run string) (map[string]uint64, error) {
	counts := map[string]uint64{}
	for _, st := range found {
		info, err := st.Info(ctx, jetstream.WithSubjectFilter(streams.SubjectPrefix+"."+run+".>"))
		if err != nil {
			return nil, fmt.Errorf("stream %s: %w", st.CachedInfo().Config.Name, err)
		}
		for s, n := range info.State.Subjects {
			counts[s] = n
		}
	}
	return counts, nil
}

// consumerEntries lists the durable consumers, only those of run if set.
func consumerEntries(ctx context.Context, found []jetstream.Stream, run string) ([]consumerEntry, error) {
	out := []consumerEntry{}
	for _, st := range found {
		lister := st.ListConsumers(ctx)
		for ci := range lister.Info() {
			filter := ci.Config.FilterSubject
			if ci.Config.Durable == "" || (run != "" && filter != "" && streams.RunOf(filter) != run) {
				continue
			}
			out = append(out, consumerEntry{Stream: ci.Stream, Name: ci.Name, Filter: filter, Pending: ci.NumPending,
				AckPending: ci.NumAckPending, Redelivered: ci.NumRedelivered})
		}
		if err := lister.Err(); err != nil {
			return nil, fmt.Errorf("consumers of %s: %w", st.CachedInfo().Config.Name, err)
		}
	}
	return out, nil
}

// bucketEntries describes the snapshot and state buckets.
func bucketEntries(ctx context.Context, js jetstream.JetStream) []bucketEntry {
	var out []bucketEntry
	for _, b := range []string{streams.BucketPolicy, streams.BucketPRM} {
		e := bucketEntry{Name: b, Kind: "object store"}
		if obs, err := js.ObjectStore(ctx, b); err != nil {
			e.Missing = true
		} else if st, err := obs.Status(ctx); err == nil {
			e.Bytes = st.Size()
		}
		out = append(out, e)
	}
	e := bucketEntry{Name: streams.BucketState, Kind: "key-value"}
	if kv, err := js.KeyValue(ctx, streams.BucketState); err != nil {
		e.Missing = true
	} else if st, err := kv.Status(ctx); err == nil {
		e.Bytes, e.Values = st.Bytes(), st.Values()
	}
	return append(out, e)
}
