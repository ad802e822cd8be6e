package pipeline

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/rspo-dev/rspo/learner"
)

// legacyKeys are the keys options were written with before the keys
// became the flag names; files and recorded settings that use them still
// read. CanonicalKey maps them.
var legacyKeys = map[string]string{
	"env_options": "env-opt", "group_size": "group", "explore_group_size": "explore-group",
	"dense_only": "dense-only", "eps_on": "eps-on", "eps_off": "eps-off", "off_ratio": "off-ratio",
	"swap_all": "swap-all", "explore_collect": "explore-collect", "prm_refresh": "prm-refresh",
	"prm_refresh_extra_run": "prm-refresh-extra-run", "prm_refresh_window": "prm-refresh-window",
	"prm_warmup_tasks": "prm-warmup-tasks", "prm_target": "prm-target", "prm_noise": "prm-noise",
	"gate_auc": "gate-auc", "explore_tilt": "explore-tilt", "eval_every": "eval-every",
	"eval_episodes": "eval-episodes", "eval_greedy": "eval-greedy", "eval_splits": "eval-splits",
	"keep_versions": "keep-versions",
}

// CanonicalKey returns the key an older spelling stands for, and whether
// key was an older spelling.
func CanonicalKey(key string) (string, bool) {
	if k, ok := legacyKeys[key]; ok {
		return k, true
	}
	return key, false
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
	for key, raw := range m {
		name, _ := CanonicalKey(key)
		if other, dup := seen[name]; dup {
			return fmt.Errorf("pipeline: keys %q and %q are the same option; give one", other, key)
		}
		seen[name] = key
		field := o.Field(name)
		if field == nil {
			return fmt.Errorf("pipeline: unknown key %q (the keys are the flag names: %s)", key, strings.Join(OptionKeys(), ", "))
		}
		if err := json.Unmarshal(raw, field); err != nil {
			return fmt.Errorf("pipeline: key %q: %s is not %s", key, raw, KindOf(field))
		}
	}
	return nil
}

// KindOf describes the values an option field takes, for error messages.
func KindOf(field any) string {
	switch field.(type) {
	case *int, *int64:
		return "an integer"
	case *float64:
		return "a number"
	case *bool:
		return "true or false"
	case *string:
		return "a string"
	case *map[string]string:
		return "a mapping of names to strings"
	case *[]string:
		return "a list of strings"
	}
	return fmt.Sprintf("a %T", field)
}

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
	legacy := false
	for k := range m {
		_, legacy = legacyKeys[k]
		if legacy {
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
	zeroS(&o.Explorer, d.Explorer)
	return o
}
