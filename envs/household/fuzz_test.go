package household

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/rspo-dev/rspo/envs"
)

// FuzzStep drives episodes with arbitrary action strings. The script is
// split into lines; a line "#N" takes admissible action N (modulo the list),
// any other line is sent as is. Nothing may panic, a running episode never
// errors, Admissible is set exactly for listed actions, and the incremental
// state key always matches a full recomputation.
func FuzzStep(f *testing.F) {
	f.Add(uint16(0), []byte("#0\n#3\nlook\ngo to nowhere\n\n#1\n#1\n#2"))
	f.Add(uint16(7), []byte("inventory\nexamine apple 1\ntake apple 1 from countertop 1\n\xff\xfe\n#99999999999"))
	env, _ := New(DefaultConfig())
	in, _ := env.Tasks(envs.SplitEvalIn, 0, 0)
	out, _ := env.Tasks(envs.SplitEvalOut, 0, 0)
	tasks := append(in, out...)
	f.Fuzz(func(t *testing.T, task uint16, script []byte) {
		ep, err := env.Reset(tasks[int(task)%len(tasks)])
		if err != nil {
			t.Fatal(err)
		}
		e := ep.(*episode)
		for _, line := range bytes.Split(script, []byte("\n")) {
			action := pickAction(e, string(line))
			listed := slices.Contains(e.Admissible(), action)
			res, err := e.Step(action)
			if e.Steps() > e.maxSteps || (err != nil && !errors.Is(err, envs.ErrEpisodeDone)) {
				t.Fatalf("Step(%q): steps %d, error %v", action, e.Steps(), err)
			}
			if err == nil && res.Admissible != listed {
				t.Fatalf("Step(%q): Admissible %v, listed %v", action, res.Admissible, listed)
			}
			if e.StateKey() != e.fullKey() {
				t.Fatalf("Step(%q): incremental key %x, full key %x", action, e.StateKey(), e.fullKey())
			}
		}
	})
}

// pickAction resolves a script line to an action.
func pickAction(e *episode, line string) string {
	if len(line) > 1 && line[0] == '#' && len(e.Admissible()) > 0 {
		if n, err := strconv.ParseUint(line[1:], 10, 32); err == nil {
			return e.Admissible()[int(n)%len(e.Admissible())]
		}
	}
	return line
}
