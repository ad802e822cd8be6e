package rollout_test

import (
	"testing"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
	"github.com/rspo-dev/rspo/schemas"
)

// FuzzCheckTrajectory checks any decodable message against the household
// without panicking, and whatever it admits as readable the built-in
// policy can read: a record the learner admits never fails its trainer.
func FuzzCheckTrajectory(f *testing.F) {
	env, err := envs.New("household", nil)
	if err != nil {
		f.Fatal(err)
	}
	for _, tr := range played(f, env, 3) {
		b, err := schemas.EncodeTrajectory(tr)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		tr.Steps[0].ActionIndex, tr.Steps[0].Action = -1, "dance"
		if b, err = schemas.EncodeTrajectory(tr); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := schemas.DecodeTrajectory(b)
		if err != nil {
			return
		}
		_ = rollout.CheckTrajectory(env, tr, false)
		if rollout.CheckTrajectory(env, tr, true) != nil {
			return
		}
		if _, err := policy.StatesFromTrajectory(tr); err != nil {
			t.Fatalf("admitted as readable, but the built-in policy cannot read it: %v", err)
		}
	})
}
