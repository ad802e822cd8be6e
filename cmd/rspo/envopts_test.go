package main

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestParseEnvOpts(t *testing.T) {
	tests := []struct {
		in      string
		want    map[string]string
		wantErr string
	}{
		{in: "preset=easy", want: map[string]string{"preset": "easy"}},
		{in: "preset=easy,max_steps=30", want: map[string]string{"preset": "easy", "max_steps": "30"}},
		// A list's items, plain and weighted, with or without other options around them.
		{in: "task_types=pick_and_place,pick_two_and_place", want: map[string]string{"task_types": "pick_and_place,pick_two_and_place"}},
		{in: "task_types=pick_and_place=2,pick_two_and_place=1",
			want: map[string]string{"task_types": "pick_and_place=2,pick_two_and_place=1"}},
		{in: "preset=easy,task_types=pick_and_place=2,pick_two_and_place=1,max_steps=40",
			want: map[string]string{"preset": "easy", "task_types": "pick_and_place=2,pick_two_and_place=1", "max_steps": "40"}},
		{in: "preset=easy,task_types=a,b", want: map[string]string{"preset": "easy", "task_types": "a,b"}},
		// The quoted form the help gave before still reads the same.
		{in: `"task_types=pick_and_place=2,pick_two_and_place=1"`, want: map[string]string{"task_types": "pick_and_place=2,pick_two_and_place=1"}},
		// A key no environment declares starts a pair unless it follows a list option.
		{in: "colour=red,size=2", want: map[string]string{"colour": "red", "size": "2"}},
		{in: "preset=easy,preset=hard", want: map[string]string{"preset": "hard"}},
		{in: "", wantErr: "want KEY=VALUE"},
		{in: "preset", wantErr: `"preset": want KEY=VALUE`},
		{in: "=easy", wantErr: "want KEY=VALUE"},
		{in: `preset="easy`, wantErr: "CSV double quotes"},
	}
	for _, tt := range tests {
		got, err := parseEnvOpts(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseEnvOpts(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !maps.Equal(got, tt.want) {
			t.Errorf("parseEnvOpts(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// TestEnvOptsRoundTrip: `rspo run --config` re-applies the command line's
// flags from their String form, so what String prints must Set back to
// the same options, also for values holding commas and "=".
func TestEnvOptsRoundTrip(t *testing.T) {
	var opts map[string]string
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	envOptsVar(fs, &opts, "")
	err := fs.Parse([]string{"--env-opt", "preset=easy,task_types=pick_and_place=2,pick_two_and_place=1",
		"--env-opt", "max_steps=40", "--env-opt", "receptacles=3-5,objects=a,b"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"preset": "easy", "task_types": "pick_and_place=2,pick_two_and_place=1",
		"max_steps": "40", "receptacles": "3-5", "objects": "a,b"}
	if !maps.Equal(opts, want) {
		t.Fatalf("parsed %v, want %v", opts, want)
	}
	s := fs.Lookup("env-opt").Value.String()
	var back map[string]string
	if err := (&envOptsValue{m: &back}).Set(s); err != nil {
		t.Fatalf("Set(%q): %v", s, err)
	}
	if !maps.Equal(back, want) {
		t.Errorf("String %q reads back as %v, want %v", s, back, want)
	}
}

// TestEvalReadsWeightedTaskTypes runs `rspo eval` with weighted task types
// in one unquoted --env-opt, which pflag's key=value list split at the
// comma ("unknown option pick_two_and_place").
func TestEvalReadsWeightedTaskTypes(t *testing.T) {
	stdout, _, err := runRspo(testContext(t), "eval", "--policy", "random", "--split", "train", "--episodes", "4", "--json",
		"--env-opt", "preset=easy,task_types=pick_and_place=1,pick_two_and_place=3")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Options map[string]string `json:"options"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v in %s", err, stdout)
	}
	want := map[string]string{"preset": "easy", "task_types": "pick_and_place=1,pick_two_and_place=3"}
	if !maps.Equal(res.Options, want) {
		t.Errorf("eval used options %v, want %v", res.Options, want)
	}
}
