package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/streams"
)

// runCost is what a run has cost over every process that trained or
// reported it: Run adds its own when it ends, in the state bucket under
// <run>.pipeline.cost, so the summary of a resumed run covers all of it.
type runCost struct {
	// WallSeconds adds up the wall time of every Run of the run.
	WallSeconds float64 `json:"wall_seconds"`
	// PeakRSSBytes is the highest peak resident memory of those processes.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// Revisions are the code revisions of those processes (Config.Revision),
	// each once, in the order they first ran it; a process that knew none,
	// or only reported a finished run, adds nothing.
	Revisions []string `json:"revisions,omitempty"`
}

func costKey(run string) string { return streams.StateKey(run, "pipeline", "cost") }

// addCost adds wall, a process's peak memory and its code revision (if
// known) to run's recorded cost and returns the new total.
func addCost(ctx context.Context, js jetstream.JetStream, run, revision string, wall time.Duration, peak int64) (runCost, error) {
	kv, err := streams.State(ctx, js)
	if err != nil {
		return runCost{}, err
	}
	var c runCost
	entry, err := kv.Get(ctx, costKey(run))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
	case err != nil:
		return runCost{}, fmt.Errorf("pipeline: read cost of run %s: %w", run, err)
	default:
		if err := json.Unmarshal(entry.Value(), &c); err != nil {
			return runCost{}, fmt.Errorf("pipeline: cost of run %s is corrupt: %w", run, err)
		}
	}
	c.WallSeconds += wall.Seconds()
	c.PeakRSSBytes = max(c.PeakRSSBytes, peak)
	if revision != "" && !slices.Contains(c.Revisions, revision) {
		c.Revisions = append(c.Revisions, revision)
	}
	b, _ := json.Marshal(c) // numbers and strings
	if entry == nil {
		_, err = kv.Create(ctx, costKey(run), b)
	} else {
		_, err = kv.Update(ctx, costKey(run), b, entry.Revision())
	}
	if err != nil {
		return runCost{}, fmt.Errorf("pipeline: record cost of run %s: %w", run, err)
	}
	return c, nil
}

// ShortRevision shortens a revision (Config.Revision) for people: a commit
// hash to 12 digits, keeping a suffix such as "-modified".
func ShortRevision(r string) string {
	hash, suffix, _ := strings.Cut(r, "-")
	if len(hash) > 12 {
		hash = hash[:12]
	}
	if suffix != "" {
		return hash + "-" + suffix
	}
	return hash
}

// RunRevisions returns the code revisions recorded as having trained run
// (Summary.Revisions), none for a run whose code did not record one or
// that has not ended a Run yet.
func RunRevisions(ctx context.Context, js jetstream.JetStream, run string) ([]string, error) {
	c, err := readCost(ctx, js, run)
	return c.Revisions, err
}
