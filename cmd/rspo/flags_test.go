package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// pflag reads a back-quoted word in a flag's usage as the name of its
// value, so "(see `rspo run`)" would show as "--config rspo run": no
// usage may contain one.
func TestFlagUsagesHaveNoBackQuotes(t *testing.T) {
	var walk func(*cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			checked++
			if strings.Contains(f.Usage, "`") {
				t.Errorf("%s --%s: usage %q has a back-quote", c.CommandPath(), f.Name, f.Usage)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	if checked < 100 {
		t.Fatalf("checked %d flags; the walk missed commands", checked)
	}
}

func TestCountFlagsRefuseZero(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  string // "" means accepted
	}{
		{"one", "1", ""},
		{"large", "4096", ""},
		{"zero", "0", "0 is not a count"},
		{"negative", "-3", "-3 is not a count"},
		{"not a number", "many", `"many" is not an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 7
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			countVar(fs, &n, "updates", "learner updates")
			if got := fs.Lookup("updates").DefValue; got != "7" {
				t.Errorf("default shown as %q, want 7", got)
			}
			err := fs.Parse([]string{"--updates", tt.value})
			if tt.want == "" {
				if err != nil || n != mustAtoi(t, tt.value) {
					t.Fatalf("--updates %s: got %d, %v", tt.value, n, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "--updates") {
				t.Fatalf("--updates %s: got %v, want an error naming --updates with %q", tt.value, err, tt.want)
			}
		})
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	var c countValue
	if err := c.Set(s); err != nil {
		t.Fatal(err)
	}
	return int(c)
}

// --prm-refresh-epochs takes a positive budget and only with --prm-refresh.
func TestPRMRefreshEpochsFlag(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"--prm-refresh", "--prm-refresh-epochs", "0"}, []string{"--prm-refresh-epochs", "want a count of at least 1"}},
		{[]string{"--prm-refresh", "--prm-refresh-epochs", "-1"}, []string{"--prm-refresh-epochs", "want a count of at least 1"}},
		{[]string{"--prm-refresh-epochs", "5"}, []string{"prm-refresh-epochs 5: want to be left alone without prm-refresh"}},
	} {
		args := append([]string{"run", "--recipe", "paper", "--data", t.TempDir()}, tt.args...)
		_, _, err := runRspo(testContext(t), args...)
		if err == nil {
			t.Fatalf("%v: accepted", tt.args)
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not mention %q", tt.args, err, w)
			}
		}
	}
	out, _, err := runRspo(testContext(t), "run", "--recipe", "paper", "--prm-refresh", "--prm-refresh-epochs", "25", "--print-config")
	if err != nil || !strings.Contains(out, "prm-refresh-epochs: 25") {
		t.Errorf("--print-config: %v\n%s", err, out)
	}
}
