package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/pipeline"
)

// rspo sft writes a policy and its record, prints its progress and its
// evaluation, and the policy starts a run that counts the demonstrations'
// steps with its own.
func TestSFTCommandWritesAStartForARun(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a policy")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "sft.policy")
	stdout, stderr, err := runRspo(testContext(t), "sft", "--episodes", "64", "--max-epochs", "3", "--eval-episodes", "8", "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"SFT epoch 1: train loss", "done, keeping epoch"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr)
		}
	}
	for _, want := range []string{"sft: ", "held-out loss", "eval_in_distribution", "rspo run --init-policy " + out} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	var rec pipeline.SFTResult
	b, err := os.ReadFile(out + pipeline.SFTRecordSuffix)
	if err == nil {
		err = json.Unmarshal(b, &rec)
	}
	if err != nil || rec.EnvSteps == 0 || rec.Demos != "expert" {
		t.Fatalf("record %+v (%v)", rec, err)
	}
	_, stderr, err = runRspo(testContext(t), "run", "--data", filepath.Join(dir, "runs"), "--init-policy", out, "--rspo=false", "--recipe", "paper",
		"--env-opt", "preset=easy", "--updates", "1", "--tasks", "2", "--group", "2", "--eval-episodes", "2", "--json")
	if err != nil {
		t.Fatalf("warm-started run: %v\n%s", err, stderr)
	}
}

func TestSFTCommandRefusesBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"sft"}, "--out FILE"},
		{[]string{"sft", "--out", filepath.Join(dir, "x"), "--demos", "teacher"}, `demos "teacher": want expert or run:NAME`},
		{[]string{"sft", "--out", filepath.Join(dir, "x"), "--episodes", "0"}, "0 is not a count"},
		{[]string{"sft", "--out", filepath.Join(dir, "x"), "--held-out", "1"}, "held-out share 1"},
		{[]string{"sft", "--out", filepath.Join(dir, "x"), "--demos", "run:nosuch", "--data", dir}, "no JetStream store"},
		{[]string{"sft", "--out", filepath.Join(dir, "x"), "--env", "houshold"}, "houshold"},
	} {
		_, _, err := runRspo(testContext(t), tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: got %v, want an error saying %q", tt.args, err, tt.want)
		}
	}
}
