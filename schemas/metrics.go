package schemas

import (
	"encoding/json"
	"fmt"
	"slices"
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
}

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
