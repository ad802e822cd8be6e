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

	"github.com/rspo-dev/rspo/settings"
	"github.com/rspo-dev/rspo/streams"
)

// ErrSettingsChanged means a run name is reused with settings other than
// those its run was started with: resuming would continue (or report) a
// different experiment than the one asked for.
var ErrSettingsChanged = errors.New("pipeline: run exists with other settings")

// Settings are the options that define what a run trains, as JSON keys
// and values: every option but the run's name, where it stores data, how
// its work is spread (actors, explore shards, verification, snapshots
// kept, evaluation cadence) and how long it trains (updates: raising them
// on a finished run continues it).
func (o Options) Settings() map[string]json.RawMessage {
	raw, _ := json.Marshal(o.Resolved()) // Options holds only JSON-safe fields
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	for _, k := range notSettings {
		delete(m, k)
	}
	return m
}

// notSettings are the option keys that do not define a run (see
// Settings): where and how it runs — its name, data, scale, snapshots
// kept, evaluation cadence, who trains and what serves the policy (an
// inference server may move) — and how long it trains.
var notSettings = append([]string{"run", "data", "actors", "verify", "keep-versions", "eval-every", "updates", "explore-shards", "eval-shards", "trainer"},
	settings.Keys(&PolicySettings{})...)

func settingsKey(run string) string { return streams.StateKey(run, "pipeline", "settings") }

// CheckSettings records the run's settings on its first start and, on a
// later start of the same run name, refuses settings that differ, naming
// each difference. A run started before settings were recorded is
// accepted and records them now.
func CheckSettings(ctx context.Context, js jetstream.JetStream, run string, settings map[string]json.RawMessage) error {
	if settings == nil {
		return nil
	}
	kv, err := streams.State(ctx, js)
	if err != nil {
		return err
	}
	entry, err := kv.Get(ctx, settingsKey(run))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		b, _ := json.Marshal(settings)
		_, err = kv.Put(ctx, settingsKey(run), b)
		return err
	}
	if err != nil {
		return fmt.Errorf("pipeline: read settings of run %s: %w", run, err)
	}
	was, err := decodeSettings(entry.Value())
	if err != nil {
		return fmt.Errorf("pipeline: settings of run %s are corrupt: %w", run, err)
	}
	was = upgradeSettings(was)
	for _, k := range notSettings { // recorded when they still counted (updates did)
		delete(was, k)
	}
	if diff := settingsDiff(was, settings); len(diff) > 0 {
		return fmt.Errorf("%w: run %s was started with %s; give this one its own --run name (or --data directory)",
			ErrSettingsChanged, run, strings.Join(diff, ", "))
	}
	return nil
}

// settingsDiff lists "key old (now new)" for every key whose value differs.
func settingsDiff(was, now map[string]json.RawMessage) []string {
	keys := map[string]bool{}
	for k := range was {
		keys[k] = true
	}
	for k := range now {
		keys[k] = true
	}
	var diff []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		a, b := compact(was[k]), compact(now[k])
		if a != b && !(zeroJSON(a) && zeroJSON(b)) { // a key added since the run began, left at its zero value
			diff = append(diff, fmt.Sprintf("%s %s (now %s)", k, a, b))
		}
	}
	return diff
}

func compact(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "unset"
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v) // canonical: sorted map keys, no spaces
	return string(b)
}

// decodeSettings parses recorded settings: a JSON object of option keys.
func decodeSettings(b []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("settings are %s, not an object", b)
	}
	return m, nil
}

// zeroJSON reports whether a compacted value is unset or a zero value.
func zeroJSON(v string) bool {
	switch v {
	case "unset", "null", "0", "false", `""`, "[]", "{}":
		return true
	}
	return false
}
