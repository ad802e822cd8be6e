package rollout

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/rspo-dev/rspo/envs"
)

// splitOf is a split of 140 tasks in a skewed mix, ordered by type as the
// household's eval splits are: its first tasks are all of one type.
func splitOf() []envs.Task {
	var tasks []envs.Task
	for typ, n := range map[string]int{"a": 70, "b": 35, "c": 21, "d": 14} {
		for i := range n {
			tasks = append(tasks, envs.Task{ID: fmt.Sprintf("%s/%d", typ, i), Type: typ})
		}
	}
	return tasks
}

func TestEvalSampleMatchesTheSplitsTaskMix(t *testing.T) {
	tasks := splitOf()
	for _, n := range []int{4, 32, 64, 140, 300} {
		got := EvalSample(tasks, n, 7)
		if len(got) != n {
			t.Fatalf("n %d: sampled %d episodes", n, len(got))
		}
		count := map[string]int{}
		for _, task := range got {
			count[task.Type]++
		}
		total := map[string]int{"a": 70, "b": 35, "c": 21, "d": 14}
		for typ, k := range total {
			want := float64(n) * float64(k) / float64(len(tasks))
			if d := float64(count[typ]) - want; d > 1.5 || d < -1.5 || count[typ] == 0 {
				t.Errorf("n %d: type %s got %d episodes, want about %.1f and at least 1", n, typ, count[typ], want)
			}
		}
	}
	if !reflect.DeepEqual(EvalSample(tasks, 32, 7), EvalSample(tasks, 32, 7)) {
		t.Error("the same seed gave another sample")
	}
	seen := map[string]bool{}
	for _, task := range EvalSample(tasks, 140, 7) {
		seen[task.ID] = true
	}
	if len(seen) != 140 {
		t.Errorf("140 episodes over 140 tasks covered %d distinct tasks, want all", len(seen))
	}
}
