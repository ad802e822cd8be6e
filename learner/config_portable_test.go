package learner

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A configuration sent to another process as JSON must come out the same
// after that process fills in its defaults — including the sentinels,
// which WithDefaults resolves to 0, a value it would read as "default".
func TestPortableSurvivesDefaultingAgain(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{name: "zero", cfg: Config{}},
		{name: "no KL, no clipping", cfg: Config{Beta: NoKL, MaxGradNorm: NoClip}},
		{name: "ppo with settings", cfg: Config{Algo: PPO, LR: 0.01, Epochs: 3, OffRatio: OffRatioOld, Alpha: 0.25}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(tt.cfg.Portable())
			if err != nil {
				t.Fatal(err)
			}
			var back Config
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			if got, want := back.WithDefaults(), tt.cfg.WithDefaults(); !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}
