package schemas

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestCheckNonce(t *testing.T) {
	for _, ok := range []string{"", "0", "0123456789abcdef0123456789abcdef", "zz9"} {
		if err := CheckNonce("nonce", ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"A", "ab-c", "a_b", "a b", strings.Repeat("f", MaxNonceBytes+1), "é"} {
		if CheckNonce("nonce", bad) == nil {
			t.Errorf("%q passed", bad)
		}
	}
}

// A nonce changes the ids, never their order: whatever the nonces of
// rspo's requests and explore tags, their trajectory ids sort byte by byte
// as the ids without nonces do, so a store keyed by id (the buffer's tie
// groups) reads them in the order it did before nonces.
func TestNoncesKeepTheIDOrder(t *testing.T) {
	producers := []string{"u1-v1-0", "u1-v1-1", "u1-v1-10", "u10-v10-0", "u2-v1-3", "prm-warmup-v0-0",
		"c0-final", "c0-u1", "c0-u10", "c0-tilt", "c1-final", "c10-final"}
	rng := rand.New(rand.NewPCG(1, 2))
	nonce := func() string { return fmt.Sprintf("%024x", rng.Uint64()) }
	type id struct{ plain, nonced string }
	for trial := range 50 {
		var ids []id
		for _, p := range producers {
			n := nonce() // one per request: the ids of one producer part share it
			for _, seq := range []uint64{0, 1, 2, 9, 10, 11} {
				plain := TrajectoryID("run-1", SourceExplore, p, seq)
				ids = append(ids, id{plain, WithNonce(plain, n)})
			}
		}
		rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		byPlain := slices.Clone(ids)
		slices.SortFunc(byPlain, func(a, b id) int { return strings.Compare(a.plain, b.plain) })
		byNonced := slices.Clone(ids)
		slices.SortFunc(byNonced, func(a, b id) int { return strings.Compare(a.nonced, b.nonced) })
		if !slices.Equal(byPlain, byNonced) {
			t.Fatalf("trial %d: nonces reordered the ids", trial)
		}
	}
}

func TestCheckTrajectoryID(t *testing.T) {
	plan := validPlan()
	tag := "c3-final"
	good := &Trajectory{Run: "r1", Seq: 5, TaskID: plan.Tasks[0].ID, GroupID: tag + "/" + plan.Tasks[0].ID}
	good.ID = plan.TrajectoryID("r1", tag, 5)
	if err := plan.CheckTrajectoryID(good); err != nil {
		t.Fatalf("the plan's own id: %v", err)
	}
	if !strings.Contains(good.ID, plan.Nonce) {
		t.Errorf("id %s does not carry the nonce %s", good.ID, plan.Nonce)
	}
	tests := []struct {
		name  string
		edit  func(*Trajectory)
		field string
	}{
		{"the predictable id without the nonce", func(x *Trajectory) { x.ID = TrajectoryID("r1", SourceExplore, tag, 5) }, "id"},
		{"another nonce", func(x *Trajectory) { x.ID = WithNonce(TrajectoryID("r1", SourceExplore, tag, 5), "0000") }, "id"},
		{"another seq", func(x *Trajectory) { x.Seq = 6 }, "id"},
		{"a group of another task", func(x *Trajectory) { x.GroupID = tag + "/other" }, "group_id"},
		{"a task not in the plan", func(x *Trajectory) {
			x.TaskID, x.GroupID = "household/train/99", tag+"/household/train/99"
			x.ID = plan.TrajectoryID("r1", tag, 5)
		}, "task_id"},
	}
	for _, tt := range tests {
		x := *good
		tt.edit(&x)
		checkField(t, tt.name, plan.CheckTrajectoryID(&x), tt.field)
	}
	plan.Nonce = ""
	x := *good
	x.ID = TrajectoryID("r1", SourceExplore, tag, 5)
	if err := plan.CheckTrajectoryID(&x); err != nil {
		t.Errorf("a plan without a nonce checks no id: %v", err)
	}
}
