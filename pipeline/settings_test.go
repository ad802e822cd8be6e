package pipeline

import (
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
)

// A run name reused with other settings must not resume (or report) the
// earlier run as if it were the one asked for; how the work is spread
// (actors) is not a setting of the run.
func TestRunRefusesOtherSettingsUnderTheSameName(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tiny run")
	}
	dir := t.TempDir()
	opts := DefaultOptions()
	opts.Run, opts.EnvOptions, opts.RSPO, opts.Data = "same-name", map[string]string{"preset": "easy"}, false, dir
	opts.Updates, opts.Tasks, opts.GroupSize, opts.EvalEpisodes = 2, 2, 2, 2
	run := func(o Options) (Summary, error) {
		cfg, err := o.Config()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
		return Run(t.Context(), cfg)
	}
	if _, err := run(opts); err != nil {
		t.Fatal(err)
	}
	other := opts
	other.LR, other.Algo = 0.01, "ppo"
	_, err := run(other)
	if !errors.Is(err, ErrSettingsChanged) {
		t.Fatalf("same name, other settings: got %v, want ErrSettingsChanged", err)
	}
	for _, want := range []string{"lr 0.03 (now 0.01)", `algo "grpo" (now "ppo")`, "--run"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	longer := opts
	longer.Updates = 4
	if sum, err := run(longer); err != nil || sum.Updates != 4 {
		t.Fatalf("a finished run asked for more updates: got %d updates, %v; want it continued to 4", sum.Updates, err)
	}
	spread := opts
	spread.Actors = 2
	sum, err := run(spread)
	if err != nil || sum.Updates != 4 {
		t.Fatalf("same run with more actors: got %d updates, %v; want the finished run's 4", sum.Updates, err)
	}
}
