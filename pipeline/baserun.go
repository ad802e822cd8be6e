package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/settings"
	"github.com/rspo-dev/rspo/streams"
)

// BaseRun is a finished run of the base algorithm alone (no RSPO, true
// rewards) with another run's settings, found in the same store
// (Summary.Base): the result to set that run's beside.
type BaseRun struct {
	Run  string `json:"run"`
	Algo string `json:"algo"`
	// Final is its final evaluation (run.finished), as Summary.Final.
	Final        map[string]float64 `json:"final"`
	EnvSteps     int64              `json:"env_steps"`
	WallSeconds  float64            `json:"wall_seconds"`
	PeakRSSBytes int64              `json:"peak_rss_bytes"`
}

// baseIgnored are the settings a run of the base algorithm alone does not
// read: the rspo and recipe keys and every setting declared in the rspo,
// explorer and PRM groups (Options). Every other setting must match.
var baseIgnored = func() []string {
	keys := []string{"rspo", "recipe"}
	for _, st := range settings.Table(&Options{}) {
		if st.Group == "rspo" || st.Group == "explorer" || st.Group == "prm" {
			keys = append(keys, st.Key)
		}
	}
	return keys
}()

// findBaseRun returns the first finished base run (by name) in the store
// whose settings match run's but for baseIgnored and whose updates are
// run's; nil when run is itself one, or recorded no settings, or the
// store holds none.
func findBaseRun(ctx context.Context, js jetstream.JetStream, run string, updates int64) (*BaseRun, error) {
	kv, err := streams.State(ctx, js)
	if err != nil {
		return nil, err
	}
	mine, ok, err := baseSettings(ctx, kv, run)
	if err != nil || !ok || isBase(mine) {
		return nil, err
	}
	for _, other := range settledRuns(ctx, kv) {
		theirs, ok, err := baseSettings(ctx, kv, other)
		if err != nil {
			return nil, err
		}
		if other == run || !ok || !isBase(theirs) || len(settingsDiff(withoutKeys(theirs), withoutKeys(mine))) > 0 {
			continue
		}
		cp, ok, err := learnersvc.LoadCheckpoint(ctx, js, other)
		if err != nil {
			return nil, err
		}
		if ok && cp.Finished && cp.Update == updates {
			return loadBaseRun(ctx, js, other, cp)
		}
	}
	return nil, nil
}

// settledRuns lists the runs that recorded settings, sorted; a store whose
// keys cannot be listed has none to offer.
func settledRuns(ctx context.Context, kv jetstream.KeyValue) []string {
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return nil
	}
	var runs []string
	for key := range keys.Keys() {
		if run, ok := strings.CutSuffix(key, ".pipeline.settings"); ok && settingsKey(run) == key {
			runs = append(runs, run)
		}
	}
	slices.Sort(runs)
	return runs
}

// baseSettings reads run's recorded settings, upgraded to today's keys.
func baseSettings(ctx context.Context, kv jetstream.KeyValue, run string) (map[string]json.RawMessage, bool, error) {
	entry, err := kv.Get(ctx, settingsKey(run))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("pipeline: read settings of run %s: %w", run, err)
	}
	m, err := decodeSettings(entry.Value())
	if err != nil {
		return nil, false, nil // another run's corrupt record: not a base run to compare with
	}
	return upgradeSettings(m), true, nil
}

// isBase says whether settings are the base algorithm's alone.
func isBase(s map[string]json.RawMessage) bool {
	return compact(s["rspo"]) == "false" && zeroJSON(compact(s["dense-only"]))
}

// withoutKeys drops baseIgnored and notSettings from s.
func withoutKeys(s map[string]json.RawMessage) map[string]json.RawMessage {
	s = maps.Clone(s)
	for _, k := range slices.Concat(baseIgnored, notSettings) {
		delete(s, k)
	}
	return s
}

// loadBaseRun reads what the report shows of a finished base run.
func loadBaseRun(ctx context.Context, js jetstream.JetStream, run string, cp learnersvc.Checkpoint) (*BaseRun, error) {
	o, err := recordedOptions(ctx, js, run)
	if err != nil {
		return nil, err
	}
	cost, err := readCost(ctx, js, run)
	if err != nil {
		return nil, err
	}
	b := &BaseRun{Run: run, Algo: o.Algo, EnvSteps: cp.EnvStepsActor + cp.EnvStepsExplorer,
		WallSeconds: cost.WallSeconds, PeakRSSBytes: cost.PeakRSSBytes}
	err = streams.Replay(ctx, js, streams.ReplayOptions{Run: run, Subject: streams.CtrlKind(schemas.EventRunFinished)}, func(m streams.Message) error {
		if m.Event != nil {
			b.Final = m.Event.Metrics
		}
		return nil
	})
	return b, err
}
