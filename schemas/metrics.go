package schemas

import (
	"encoding/json"
	"fmt"
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
	switch {
	case m.Run == "":
		return &ValidationError{Field: "run", Reason: "empty"}
	case m.Component == "":
		return &ValidationError{Field: "component", Reason: "empty"}
	case m.Kind == "":
		return &ValidationError{Field: "kind", Reason: "empty"}
	}
	return nil
}

// EncodeMetrics returns the JSON wire form after validating. Non-finite
// values cannot be represented in JSON and are reported as an error.
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
