package pipeline

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/settings"
)

// CanonicalKey returns the key an older spelling stands for (its
// declaration's alias tag), and whether key was an older spelling.
func CanonicalKey(key string) (string, bool) {
	s, alias, ok := settings.Lookup(&Options{}, key)
	if !ok {
		return key, false
	}
	return s.Key, alias
}

// isLegacyKey reports whether key is an older spelling of a key.
func isLegacyKey(key string) bool {
	_, alias := CanonicalKey(key)
	return alias
}

// MarshalJSON writes o as a JSON object of keys and values, in the order
// of OptionKeys; durations as Go writes them ("1m0s").
func (o Options) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range settings.Table(&o) {
		if i > 0 {
			b.WriteByte(',')
		}
		raw, err := settingJSON(s, &o)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%q:%s", s.Key, raw)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// settingJSON renders one setting's value of o as JSON.
func settingJSON(s settings.Setting, o *Options) ([]byte, error) {
	if settings.IsDuration(s.Type()) {
		return json.Marshal(s.Value(o))
	}
	return json.Marshal(s.Ptr(o))
}

// setJSON reads a JSON value into the setting stored under key (as
// written), failing with what the setting takes.
func setJSON(o *Options, key string, raw json.RawMessage) error {
	s, _, ok := settings.Lookup(o, key)
	if !ok {
		return fmt.Errorf("unknown key %q (the keys are the flag names: %s)", key, strings.Join(OptionKeys(), ", "))
	}
	bad := fmt.Errorf("key %q: %s is not %s", key, raw, settings.Kind(s.Type()))
	if settings.IsDuration(s.Type()) {
		var text string
		if json.Unmarshal(raw, &text) != nil || settings.Set(s.Ptr(o), text) != nil {
			return bad
		}
		return nil
	}
	if json.Unmarshal(raw, s.Ptr(o)) != nil || string(raw) == "null" && isScalar(s.Ptr(o)) {
		return bad
	}
	emptyToNil(s.Ptr(o))
	return nil
}

// UnmarshalJSON reads a JSON object of options over o: keys it leaves out
// keep their value (env-opt maps merge), an unknown key is an error, and
// the older snake_case keys still read.
func (o *Options) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("pipeline: options: %w", err)
	}
	seen := map[string]string{}
	for _, key := range slices.Sorted(maps.Keys(m)) {
		name, _ := CanonicalKey(key)
		if other, dup := seen[name]; dup {
			return fmt.Errorf("pipeline: keys %q and %q are the same option; give one", other, key)
		}
		seen[name] = key
		if err := setJSON(o, key, m[key]); err != nil {
			return fmt.Errorf("pipeline: %w", err)
		}
	}
	return nil
}

// KindOf describes the values an option field takes, for error messages.
func KindOf(field any) string { return settings.Kind(reflect.TypeOf(field).Elem()) }

// upgradeSettings rewrites settings recorded with the older keys, when a
// zero meant the learner's default, into the current form, so a run
// started before the change resumes. Current settings pass unchanged.
func upgradeSettings(m map[string]json.RawMessage) map[string]json.RawMessage {
	if _, ok := m["recipe"]; !ok && len(m) > 0 {
		// recorded before recipes existed: every such run used the paper's
		m = maps.Clone(m)
		m["recipe"] = json.RawMessage(`"` + RecipePaper + `"`)
	}
	if _, ok := m["prm-refresh-epochs"]; !ok && len(m) > 0 {
		// recorded before refreshes had a budget: a refresh used the
		// trainer's (the key is read after the legacy rewrite below too)
		m = maps.Clone(m)
		m["prm-refresh-epochs"] = json.RawMessage(strconv.Itoa(legacyRefreshEpochs(m)))
	}
	if _, ok := m["off-credit"]; !ok && len(m) > 0 {
		// recorded before the credit rule could be chosen: every step of a
		// buffer trajectory got its advantage
		m = maps.Clone(m)
		m["off-credit"] = json.RawMessage(`"` + string(learner.OffCreditEpisode) + `"`)
	}
	for key, was := range addedKeys {
		if _, ok := m[key]; !ok && len(m) > 0 {
			// recorded before the setting existed: those runs had its first value
			m = maps.Clone(m)
			m[key] = json.RawMessage(was)
		}
	}
	legacy := false
	for k := range m {
		if legacy = isLegacyKey(k); legacy {
			break
		}
	}
	if !legacy {
		return m
	}
	raw, _ := json.Marshal(m)
	var o Options
	if json.Unmarshal(raw, &o) != nil {
		return m
	}
	return o.withZeroDefaults().Settings()
}

// addedKeys are settings added after runs were recorded, with the value
// (as JSON) that every run before them had: what their default still is.
var addedKeys = map[string]string{
	"off-target":     `"all"`,
	"explore-target": `"all"`,
}

// legacyRefreshEpochs is the prm-refresh-epochs of settings recorded
// without it: LegacyPRMRefreshEpochs for a run that refreshed, else the
// default (unused).
func legacyRefreshEpochs(m map[string]json.RawMessage) int {
	for _, k := range []string{"prm-refresh", "prm_refresh"} {
		var on bool
		if json.Unmarshal(m[k], &on) == nil && on {
			return LegacyPRMRefreshEpochs
		}
	}
	return DefaultPRMRefreshEpochs
}

// withZeroDefaults replaces the zeros that once meant "the learner's
// default" by those defaults.
func (o Options) withZeroDefaults() Options {
	d := DefaultOptions()
	zero := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	zeroF := func(v *float64, def float64) {
		if *v == 0 {
			*v = def
		}
	}
	zeroS := func(v *string, def string) {
		if *v == "" {
			*v = def
		}
	}
	zero(&o.Epochs, d.Epochs)
	zero(&o.EvalEpisodes, d.EvalEpisodes)
	zero(&o.PRMWarmupTasks, d.PRMWarmupTasks)
	zero(&o.PRMRefreshWindow, d.PRMRefreshWindow)
	zeroF(&o.LR, d.LR)
	zeroF(&o.EpsOn, d.EpsOn)
	zeroF(&o.EpsOff, d.EpsOff)
	zeroF(&o.Beta, d.Beta)
	zeroS(&o.OffRatio, d.OffRatio)
	zeroS(&o.OffCredit, d.OffCredit)
	zeroS(&o.PRMTarget, d.PRMTarget)
	zeroS(&o.PRMFeatures, d.PRMFeatures)
	if o.Explore.Mode == "" {
		o.Explore.Mode = d.Explore.Mode
	}
	return o
}
