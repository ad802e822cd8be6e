package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

func TestRunConfigFileAndFlagsOverride(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	cfg := `{"env": "shop", "k": 5, "alpha": 0.25, "group": 4, "env-opt": {"preset": "easy"}}`
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	o := defaultRunOptions()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	registerSettings(fs, &o, stageRun)
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
	if got, want := pc.Learner.Run, "shop-easy-grpo-rspo-prm-s9"; got != want {
		t.Errorf("derived run name: got %q, want %q", got, want)
	}
}

func TestRunFailsFastOnBadSettings(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown algorithm", []string{"--algo", "sarsa"}, []string{`"sarsa" for "--algo" flag: want one of grpo, ppo, gigpo`}},
		{"every refused value of a file at once", []string{"--config", "testdata/bad-values.yaml"},
			[]string{"bad-values.yaml:2:8: settings: alpha 2: want a number from 0 to 1", "bad-values.yaml:3:8: settings: tasks 0: want a count of at least 1"}},
		{"an unknown environment at its line", []string{"--config", "testdata/bad-env.yaml"}, []string{"bad-env.yaml:2:6: settings: env houshold: want"}},
		{"print-config refuses an unknown environment", []string{"--env", "houshold", "--print-config"}, []string{"env houshold: want"}},
		{"print-config refuses an out-of-range value in a file", []string{"--config", "testdata/bad-env.yaml", "--print-config"}, []string{"bad-env.yaml:2:6"}},
		{"alpha out of range", []string{"--alpha", "2"}, []string{`"2" for "--alpha" flag: want a number from 0 to 1`}},
		{"unknown explorer", []string{"--explorer", "psychic"}, []string{`"psychic" for "--explorer" flag: want one of prm, frozen, random-prm`}},
		{"unknown config key", []string{"--config", "testdata/bad-run-config.json"}, []string{`unknown key "group_sise"`, "group"}},
		{"missing PRM file", []string{"--prm", "no-such.prm"}, []string{"no-such.prm"}},
		{"missing init policy", []string{"--init-policy", "no-such.policy"}, []string{"init-policy", "no-such.policy"}},
		{"alpha 0 with RSPO", []string{"--alpha", "0"}, []string{"alpha 0", "rspo=false"}},
		{"unknown PRM target", []string{"--prm-target", "vibes"}, []string{`"vibes" for "--prm-target" flag: want one of sum, step`}},
		{"unknown off-policy ratio", []string{"--off-ratio", "current"}, []string{`"current" for "--off-ratio" flag: want one of behaviour, old`}},
		{"unknown off-policy credit", []string{"--off-credit", "steps"}, []string{`"steps" for "--off-credit" flag: want one of episode, no-loops`}},
		{"negative tilt", []string{"--explore-tilt", "-1"}, []string{`"-1" for "--explore-tilt" flag: want a number from 0 to 1000`}},
		{"huge tilt", []string{"--explore-tilt", "1e308"}, []string{`"1e308" for "--explore-tilt" flag: want a number from 0 to 1000`}},
		{"zero updates", []string{"--updates", "0"}, []string{`"--updates"`, "at least 1"}},
		{"zero group", []string{"--group", "0"}, []string{`"--group"`, "at least 1"}},
		{"zero eval episodes", []string{"--eval-episodes", "0"}, []string{`"--eval-episodes"`}},
		{"zero derived explore group", []string{"--explore-group", "0"}, []string{`"--explore-group"`}},
		{"zero count in the config file", []string{"--config", "testdata/zero-tasks.json"}, []string{"tasks 0", "at least 1"}},
		{"tilt with PRM noise", []string{"--explore-tilt", "3", "--prm-noise", "0.1"}, []string{"tilt and PRM noise"}},
		{"negative max staleness", []string{"--max-staleness", "-1"}, []string{`"-1" for "--max-staleness" flag: want at least 0`}},
		{"zero eval shards", []string{"--eval-shards", "0"}, []string{`"--eval-shards"`, "want a count of at least 1"}},
		{"negative eval shards", []string{"--eval-shards", "-2"}, []string{`"--eval-shards"`, "want a count of at least 1"}},
		{"more eval shards than episodes", []string{"--eval-shards", "9", "--eval-episodes", "8"},
			[]string{"eval-shards 9: want at most 8: an evaluation has 8 episodes (eval-episodes)"}},
		{"max staleness past keep-versions", []string{"--max-staleness", "4", "--keep-versions", "4"}, []string{"max staleness 4", "raise keep-versions"}},
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

// With NATS_URL set and no --nats, rspo run trains on that server, as
// the --nats help says, not on an embedded one.
func TestRunUsesNATSURL(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	t.Setenv("NATS_URL", s.ClientURL())
	ctx := testContext(t)
	_, stderr, err := runRspo(ctx, "run", "--data", t.TempDir(), "--run", "via-env", "--rspo=false",
		"--env-opt", "preset=easy", "--updates", "1", "--tasks", "2", "--group", "2", "--eval-episodes", "2")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if strings.Contains(stderr, "embedded NATS server") {
		t.Errorf("run started an embedded server despite NATS_URL:\n%s", stderr)
	}
	st, err := js.Stream(ctx, streams.StreamTraj)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(streams.Subjects("via-env").TrajOnPolicy))
	if err != nil {
		t.Fatal(err)
	}
	if n := info.State.Subjects[streams.Subjects("via-env").TrajOnPolicy]; n != 4 {
		t.Errorf("the NATS_URL server holds %d on-policy trajectories of the run, want 2 tasks × 2 = 4", n)
	}
}

// rspo run names each built-in source run's stage: the base algorithm for
// the first stage, the tilted recipe for the household's second.
func TestSourceRunLines(t *testing.T) {
	o := pipeline.DefaultOptions()
	o.Data = t.TempDir()
	cfg, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.SourceRuns) != 3 {
		t.Fatalf("%d source runs, want the household's two stages (2 + 1)", len(cfg.SourceRuns))
	}
	for i, want := range []string{"the base algorithm", "the base algorithm", "the tilted recipe, steered by a PRM of the runs above"} {
		src := cfg.SourceRuns[i]
		line := sourceRunLine(src, src.Learner.Run, i+1, 3)
		prefix := fmt.Sprintf("rspo: PRM source run %d of 3: %s (%s, 100 updates, on preset=easy task_types=", i+1, src.Learner.Run, want)
		if !strings.HasPrefix(line, prefix) {
			t.Errorf("source run %d: %q\nwant it to start %q", i+1, line, prefix)
		}
	}
}
