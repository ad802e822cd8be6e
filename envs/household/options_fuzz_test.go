package household

import "testing"

// FuzzConfigFromOptions parses arbitrary --env-opt pairs: a configuration
// is either refused or valid, never a panic.
func FuzzConfigFromOptions(f *testing.F) {
	for _, kv := range [][2]string{{"preset", "easy"}, {"max_steps", "-3"}, {"task_types", "pick_and_place,,"}, {"receptacles", "99999999999"}, {"zzz", "1"}} {
		f.Add(kv[0], kv[1], "preset", "hard")
	}
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		c, err := ConfigFromOptions(map[string]string{k1: v1, k2: v2})
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("options %q=%q %q=%q gave an invalid config: %v", k1, v1, k2, v2, err)
		}
	})
}
