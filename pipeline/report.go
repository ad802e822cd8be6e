package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/streams"
)

// ErrNoRun means the server holds no checkpoint of the run named.
var ErrNoRun = errors.New("pipeline: no such run")

// Report writes the report of a recorded run again, from its streams,
// into dataDir/<run>/report, as Run does when it ends: the run's recorded
// settings give its configuration, its checkpoint the counts and its
// recorded cost the wall time and peak memory. The PRM the run started
// from is not needed and not loaded.
func Report(ctx context.Context, js jetstream.JetStream, run, dataDir string) (Summary, error) {
	cp, ok, err := learnersvc.LoadCheckpoint(ctx, js, run)
	if err != nil {
		return Summary{}, err
	}
	if !ok {
		return Summary{}, fmt.Errorf("%w %q on this server (rspo runs lists them)", ErrNoRun, run)
	}
	o, err := recordedOptions(ctx, js, run)
	if err != nil {
		return Summary{}, err
	}
	o.Run, o.Data, o.PRMFile, o.Updates = run, dataDir, "", int(max(1, cp.Update))
	cfg, err := o.Config()
	if err != nil {
		return Summary{}, fmt.Errorf("pipeline: the recorded settings of run %s: %w", run, err)
	}
	cost, err := readCost(ctx, js, run)
	if err != nil {
		return Summary{}, err
	}
	return writeReport(ctx, js, cfg.withDefaults(), cp, cost, nil)
}

// recordedOptions reads the options a run recorded when it started.
func recordedOptions(ctx context.Context, js jetstream.JetStream, run string) (Options, error) {
	kv, err := streams.State(ctx, js)
	if err != nil {
		return Options{}, err
	}
	entry, err := kv.Get(ctx, settingsKey(run))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Options{}, fmt.Errorf("pipeline: run %s recorded no settings (it was started by an older rspo)", run)
	}
	if err != nil {
		return Options{}, fmt.Errorf("pipeline: read settings of run %s: %w", run, err)
	}
	m, err := decodeSettings(entry.Value())
	if err != nil {
		return Options{}, fmt.Errorf("pipeline: settings of run %s are corrupt: %w", run, err)
	}
	raw, _ := json.Marshal(upgradeSettings(m))
	o := DefaultOptions()
	if err := json.Unmarshal(raw, &o); err != nil {
		return Options{}, fmt.Errorf("pipeline: settings of run %s: %w", run, err)
	}
	return o, nil
}

// readCost reads a run's recorded cost (zero before its first Run ended).
func readCost(ctx context.Context, js jetstream.JetStream, run string) (runCost, error) {
	kv, err := streams.State(ctx, js)
	if err != nil {
		return runCost{}, err
	}
	var c runCost
	entry, err := kv.Get(ctx, costKey(run))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return c, nil
	case err != nil:
		return c, fmt.Errorf("pipeline: read cost of run %s: %w", run, err)
	}
	if err := json.Unmarshal(entry.Value(), &c); err != nil {
		return c, fmt.Errorf("pipeline: cost of run %s is corrupt: %w", run, err)
	}
	return c, nil
}
