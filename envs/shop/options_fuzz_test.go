package shop

import "testing"

// FuzzParseOptions parses arbitrary --env-opt pairs: a configuration is
// either refused or valid, never a panic.
func FuzzParseOptions(f *testing.F) {
	for _, kv := range [][2]string{{"preset", "easy"}, {"max_steps", "0"}, {"catalogue_size", "-1"}, {"goals", "9999999999999"}, {"x", "y"}, {"reward", "success"}, {"reward", ""}} {
		f.Add(kv[0], kv[1], "preset", "standard")
	}
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		c, err := ParseOptions(map[string]string{k1: v1, k2: v2})
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("options %q=%q %q=%q gave an invalid config: %v", k1, v1, k2, v2, err)
		}
	})
}
