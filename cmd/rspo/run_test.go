package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestRunConfigFileAndFlagsOverride(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	cfg := `{"env": "shop", "k": 5, "alpha": 0.25, "group_size": 4, "env_options": {"preset": "easy"}}`
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	o := defaultRunOptions()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	registerRunFlags(fs, &o)
	if err := fs.Parse([]string{"--k", "2", "--seed", "9"}); err != nil {
		t.Fatal(err)
	}
	if _, err := loadRunConfig(fs, path, &o); err != nil {
		t.Fatal(err)
	}
	if o.Env != "shop" || o.Alpha != 0.25 || o.GroupSize != 4 || o.EnvOptions["preset"] != "easy" {
		t.Errorf("file values not applied: %+v", o)
	}
	if o.K != 2 || o.Seed != 9 {
		t.Errorf("flags must override the file: k %d seed %d, want 2 and 9", o.K, o.Seed)
	}
	if o.Updates != 30 {
		t.Errorf("unset keys keep their defaults: updates %d, want 30", o.Updates)
	}
	pc, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := pc.Learner.Run, "shop-grpo-rspo-prm-s9"; got != want {
		t.Errorf("derived run name: got %q, want %q", got, want)
	}
}

func TestRunFailsFastOnBadSettings(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"every problem at once", []string{"--algo", "sarsa", "--alpha", "2", "--explorer", "psychic"},
			[]string{"sarsa", "alpha 2", "psychic"}},
		{"unknown config key", []string{"--config", "testdata/bad-run-config.json"}, []string{`unknown field "group"`, "group_size"}},
		{"missing PRM file", []string{"--prm", "no-such.prm"}, []string{"no-such.prm"}},
		{"alpha 0 with RSPO", []string{"--alpha", "0"}, []string{"alpha 0", "rspo=false"}},
		{"unknown PRM target", []string{"--prm-target", "vibes"}, []string{`PRM target "vibes"`}},
		{"unknown off-policy ratio", []string{"--off-ratio", "current"}, []string{`"current" is not behaviour or old`}},
		{"negative tilt", []string{"--explore-tilt", "-1"}, []string{"explore tilt -1"}},
		{"tilt with PRM noise", []string{"--explore-tilt", "3", "--prm-noise", "0.1"}, []string{"tilt and PRM noise"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runRspo(testContext(t), append([]string{"run", "--data", t.TempDir()}, tt.args...)...)
			if err == nil {
				t.Fatal("run accepted bad settings")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}
