package learnersvc

import (
	"testing"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/learner"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

func TestOffTargetFailingTakesRecordsOnlyForFailedGroups(t *testing.T) {
	p, err := policy.New(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := learner.New(p, learner.Config{Alpha: 0.125})
	if err != nil {
		t.Fatal(err)
	}
	tasks := []envs.Task{{ID: "a"}, {ID: "b"}, {ID: "c"}, {ID: "d"}}
	on := []*schemas.Trajectory{
		{TaskID: "a", Success: true}, {TaskID: "a"}, // a succeeded once: it has a signal
		{TaskID: "b"}, {TaskID: "b"}, // b failed every rollout
		{TaskID: "c", Success: true}, {TaskID: "c", Success: true},
		{TaskID: "d"}, {TaskID: "d"},
	}
	off := []*schemas.Trajectory{{TaskID: "b"}, {TaskID: "a"}, {TaskID: "d"}, {TaskID: "x"}}
	for _, tt := range []struct {
		target    OffTarget
		ids, kept []string
		alpha     float64
	}{
		{OffTargetAll, []string{"a", "b", "c", "d"}, []string{"b", "a", "d", "x"}, 0.125},
		// 4 tasks × 4 rollouts at α 1/8 ask for 2 records; b and d's two
		// fill them, so α stays 1/8.
		{OffTargetFailing, []string{"b", "d"}, []string{"b", "d"}, 0.125},
	} {
		s := &Service{cfg: Config{RSPO: true, Tasks: 4, GroupSize: 4, OffTarget: tt.target, Trainer: learner.Config{Alpha: 0.125}}, trainer: tr}
		ids := s.offTasks(tasks, on)
		if !equal(ids, tt.ids) {
			t.Errorf("%s: tasks %v, want %v", tt.target, ids, tt.ids)
		}
		kept, err := s.targetOff(off, ids)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range kept {
			got = append(got, k.TaskID)
		}
		if !equal(got, tt.kept) || tr.Config().Alpha != tt.alpha {
			t.Errorf("%s: kept %v at α %v, want %v at %v", tt.target, got, tr.Config().Alpha, tt.kept, tt.alpha)
		}
	}
	// One failed group's record of the two asked for: half the weight.
	s := &Service{cfg: Config{RSPO: true, Tasks: 4, GroupSize: 4, OffTarget: OffTargetFailing, Trainer: learner.Config{Alpha: 0.125}}, trainer: tr}
	kept, err := s.targetOff(off, []string{"b"})
	if err != nil || len(kept) != 1 || tr.Config().Alpha != 0.0625 {
		t.Errorf("one record of two: kept %d at α %v (%v), want 1 at 0.0625", len(kept), tr.Config().Alpha, err)
	}
	if kept, err := s.targetOff(off, []string{"z"}); err != nil || kept != nil {
		t.Errorf("no record of a failed group: kept %v (%v), want none", kept, err)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestExploreTargetFailingSpendsTheBudgetOnFailingTypes(t *testing.T) {
	var cp Checkpoint
	cp.countGroups([]*schemas.Trajectory{
		{TaskID: "a", TaskType: "easy", Success: true}, {TaskID: "a", TaskType: "easy"},
		{TaskID: "b", TaskType: "hard"}, {TaskID: "b", TaskType: "hard"},
		{TaskID: "c", TaskType: "hard", Success: true},
	})
	if got := cp.Groups; got["easy"] != (GroupCount{Groups: 1}) || got["hard"] != (GroupCount{Groups: 2, Failed: 1}) {
		t.Fatalf("counts %v", got)
	}
	pool := []envs.Task{{ID: "1", Type: "easy"}, {ID: "2", Type: "hard"}, {ID: "3", Type: "easy"}, {ID: "4", Type: "hard"}, {ID: "5", Type: "other"}}
	c := Config{ExploreTarget: ExploreTargetFailing}
	plan := schemas.CyclePlan{ExploreSettings: schemas.ExploreSettings{Collect: 2, Shards: 4}}
	kept := c.targetExploration(&plan, pool, cp.Groups)
	if len(kept) != 2 || kept[0].ID != "2" || kept[1].ID != "4" || plan.Collect != 5 || plan.Shards != 2 {
		t.Errorf("kept %v, collect %d, shards %d; want the two hard tasks with the pool's 10 rollouts and 2 shards", kept, plan.Collect, plan.Shards)
	}
	for _, counts := range []map[string]GroupCount{nil, {"easy": {Groups: 3}}} {
		plan := schemas.CyclePlan{ExploreSettings: schemas.ExploreSettings{Collect: 2}}
		if kept := c.targetExploration(&plan, pool, counts); len(kept) != len(pool) || plan.Collect != 2 {
			t.Errorf("counts %v: kept %d tasks at collect %d; want the whole pool as it was", counts, len(kept), plan.Collect)
		}
	}
	all := Config{ExploreTarget: ExploreTargetAll}
	if kept := all.targetExploration(&plan, pool, cp.Groups); len(kept) != len(pool) {
		t.Errorf("target all kept %d of %d tasks", len(kept), len(pool))
	}
}
