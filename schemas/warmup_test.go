package schemas

import "testing"

func TestTrajectoryPRMWarmup(t *testing.T) {
	tests := []struct {
		name    string
		source  Source
		groupID string
		want    bool
	}{
		{"warm-up rollout", SourceOnPolicy, "prm-warmup-v0-1/household/train/7", true},
		{"training rollout", SourceOnPolicy, "u3-v3-0/household/train/7", false},
		{"explorer rollout with a like tag", SourceExplore, "prm-warmup-v0-1/t", false},
		{"tag without its dash", SourceOnPolicy, "prm-warmupx/t", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &Trajectory{Source: tt.source, GroupID: tt.groupID}
			if got := tr.PRMWarmup(); got != tt.want {
				t.Errorf("PRMWarmup() = %v, want %v", got, tt.want)
			}
		})
	}
}
