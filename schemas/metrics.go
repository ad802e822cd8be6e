package schemas

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// MetricsEvent is one report of figures from a component, published as JSON
// on rspo.<run>.metrics.<component>. Values is flat so that any consumer can
// turn a metrics stream into a table without knowing the component.
type MetricsEvent struct {
	Run       string    `json:"run"`
	Component string    `json:"component"`
	Time      time.Time `json:"time"`
	// Kind says what the figures describe: "update", "eval", "explore",
	// "buffer", "prm", ...
	Kind string `json:"kind"`
	// Cycle and Update place the figures in the learner's loop.
	Cycle  int64 `json:"cycle"`
	Update int64 `json:"update"`
	// Values holds the figures by name, e.g. "success_rate", "clip_frac_on".
	Values map[string]float64 `json:"values"`
	// Labels holds string-valued context, e.g. {"split": "eval_in_distribution"}.
	Labels map[string]string `json:"labels,omitempty"`
	// ID, when set, names the report within its run and component, e.g.
	// "update/u12": work redone after a restart (an update past the last
	// checkpoint, an explore shard redelivered) reports again under the
	// same ID, and readers keep the first report of each (the loop is
	// deterministic, so the two agree but for timings). Empty: every
	// event stands alone.
	ID string `json:"id,omitempty"`
}

// MaxMetricsIDBytes is the longest MetricsEvent.ID.
const MaxMetricsIDBytes = 200

// Validate reports whether the event is well formed.
func (m MetricsEvent) Validate() error {
	if err := CheckRunName(m.Run); err != nil {
		return err
	}
	switch {
	case m.Component == "":
		return &ValidationError{Field: "component", Reason: "empty"}
	case m.Kind == "":
		return &ValidationError{Field: "kind", Reason: "empty"}
	case len(m.ID) > MaxMetricsIDBytes:
		return &ValidationError{Field: "id", Reason: fmt.Sprintf("%d bytes, at most %d", len(m.ID), MaxMetricsIDBytes)}
	case strings.ContainsFunc(m.ID, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return &ValidationError{Field: "id", Reason: "holds a space or control character"}
	}
	return checkFiniteValues("values", m.Values)
}

// checkFiniteValues reports the first non-finite value of a figures map
// (JSON cannot carry NaN or ±Inf), in key order so the error is stable.
func checkFiniteValues(field string, values map[string]float64) error {
	var bad []string
	for k, v := range values {
		if !isFinite(v) {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	return &ValidationError{Field: fmt.Sprintf("%s[%q]", field, bad[0]), Reason: fmt.Sprintf("%v is not finite", values[bad[0]])}
}

// EncodeMetrics returns the JSON wire form after validating. Non-finite
// values cannot be represented in JSON and are reported by Validate.
func EncodeMetrics(m MetricsEvent) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, &ValidationError{Field: "values", Reason: err.Error()}
	}
	return b, nil
}

// DecodeMetrics parses and validates a metrics event.
func DecodeMetrics(b []byte) (MetricsEvent, error) {
	var m MetricsEvent
	if err := json.Unmarshal(b, &m); err != nil {
		return MetricsEvent{}, &ValidationError{Field: "metrics", Reason: fmt.Sprintf("not valid JSON: %v", err)}
	}
	if err := m.Validate(); err != nil {
		return MetricsEvent{}, err
	}
	return m, nil
}
