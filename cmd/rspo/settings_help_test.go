package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/settings"
)

// For every recipe, the help of each setting's flag states the default
// that --print-config prints under that recipe: the help is generated
// from the same declaration, so a recipe that replaces a default shows
// it (e.g. "default 10 under tilted, 0 under paper").
func TestHelpStatesThePrintedDefaultOfEveryRecipe(t *testing.T) {
	help, _, err := runRspo(testContext(t), "run", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, recipe := range pipeline.Recipes() {
		out, _, err := runRspo(testContext(t), "run", "--recipe", recipe, "--print-config")
		if err != nil {
			t.Fatalf("--recipe %s --print-config: %v", recipe, err)
		}
		var printed pipeline.Options
		if _, err := pipeline.DecodeOptionsYAML("printed", []byte(out), &printed); err != nil {
			t.Fatalf("--recipe %s: the printed config does not read back: %v\n%s", recipe, err, out)
		}
		for _, s := range settings.Table(&printed) {
			if s.Key == "recipe" || s.Key == "run" {
				continue // the recipe is the flag itself; the run's name is derived
			}
			line := helpLine(t, help, s.Key)
			if s.Derived != "" {
				if !strings.Contains(line, "(default: "+s.Derived+")") {
					t.Errorf("--%s: help %q does not say its default is derived (%s)", s.Key, line, s.Derived)
				}
				continue
			}
			want := s.Value(&printed)
			if got, ok := helpDefault(line, recipe); !ok || got != want {
				t.Errorf("--recipe %s: --%s's help states default %q (found %v), --print-config prints %q\n%s", recipe, s.Key, got, ok, want, line)
			}
		}
	}
}

// helpLine returns the line of help that describes --key.
func helpLine(t *testing.T, help, key string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^\s+--` + regexp.QuoteMeta(key) + `\s.*$`)
	line := re.FindString(help)
	if line == "" {
		t.Fatalf("--help lists no --%s", key)
	}
	return line
}

// helpDefault reads the default a help line states under recipe: "default
// V under RECIPE" where recipes differ, "(default V)" otherwise; a line
// without one states the zero value (false or "").
func helpDefault(line, recipe string) (string, bool) {
	if m := regexp.MustCompile(`(?:\(default |, )(\S+) under ` + regexp.QuoteMeta(recipe) + `\b`).FindStringSubmatch(line); m != nil {
		return strings.Trim(m[1], `"`), true
	}
	if m := regexp.MustCompile(`\(default ([^)]*)\)\s*$`).FindStringSubmatch(line); m != nil {
		return m[1], true
	}
	if strings.Contains(line, "(default") {
		return "", false
	}
	if strings.Contains(line, "string") || strings.Contains(line, "strings") || strings.Contains(line, "key=value") {
		return "", true
	}
	return "false", true
}
