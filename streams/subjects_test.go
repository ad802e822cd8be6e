package streams

import (
	"errors"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/schemas"
)

func TestValidateRun(t *testing.T) {
	tests := []struct {
		name string
		run  string
		ok   bool
	}{
		{"plain", "run1", true},
		{"dash and underscore", "hard-grpo_s3", true},
		{"empty", "", false},
		{"dot", "a.b", false},
		{"star", "a*", false},
		{"gt", "a>", false},
		{"space", "a b", false},
		{"leading dash", "-a", true},
		{"unicode", "läuft", false},
		{"too long", strings.Repeat("a", 65), false},
		{"max length", strings.Repeat("a", 64), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateRun(tt.run)
			if got := err == nil; got != tt.ok {
				t.Fatalf("ValidateRun(%q) = %v, want ok=%v", tt.run, err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidName) {
				t.Errorf("got %v, want an error matching ErrInvalidName", err)
			}
		})
	}
}

func TestSubjects(t *testing.T) {
	s := Subjects("r1")
	tests := []struct {
		name, got, want, stream string
	}{
		{"onpolicy", s.TrajOnPolicy, "rspo.r1.traj.onpolicy", StreamTraj},
		{"explore", s.TrajExplore, "rspo.r1.traj.explore", StreamTraj},
		{"traj by source", s.Traj(schemas.SourceExplore), "rspo.r1.traj.explore", StreamTraj},
		{"swapped", s.Swapped, "rspo.r1.swapped", StreamSwapped},
		{"work", s.WorkRollout, "rspo.r1.work.rollout", StreamWork},
		{"explore shards", s.WorkExplore, "rspo.r1.work.explore", StreamWork},
		{"ctrl", s.Ctrl(schemas.EventCycleStarted), "rspo.r1.ctrl.cycle.started", StreamCtrl},
		{"metrics", s.Metrics("learner"), "rspo.r1.metrics.learner", StreamMetrics},
		{"dlq", s.DLQ("swapper"), "rspo.r1.dlq.swapper", StreamDLQ},
		{"buffer sample", s.BufferSample, "rspo.r1.buffer.sample", ""},
		{"buffer stats", s.BufferStats, "rspo.r1.buffer.stats", ""},
		{"prm score", s.PRMScore, "rspo.r1.prm.score", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got subject %q, want %q", tt.got, tt.want)
			}
			if got := StreamFor(tt.got); got != tt.stream {
				t.Errorf("StreamFor(%q) = %q, want %q", tt.got, got, tt.stream)
			}
			if got := RunOf(tt.got); got != "r1" {
				t.Errorf("RunOf(%q) = %q, want r1", tt.got, got)
			}
		})
	}
}

func TestSubjectMatches(t *testing.T) {
	tests := []struct {
		name, filter, subject string
		want                  bool
	}{
		{"literal", "a.b", "a.b", true},
		{"star", "a.*.c", "a.x.c", true},
		{"star too short", "a.*.c", "a.x", false},
		{"gt one", "a.>", "a.b", true},
		{"gt many", "a.>", "a.b.c", true},
		{"gt needs a token", "a.>", "a", false},
		{"longer subject", "a.b", "a.b.c", false},
		{"mismatch", "a.b", "a.c", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := subjectMatches(tt.filter, tt.subject); got != tt.want {
				t.Errorf("subjectMatches(%q, %q) = %v, want %v", tt.filter, tt.subject, got, tt.want)
			}
		})
	}
}

func TestRunOfForeignSubject(t *testing.T) {
	for _, s := range []string{"", "rspo", "rspo.", "other.r1.traj", "rspo.a*b.x"} {
		if got := RunOf(s); got != "" {
			t.Errorf("RunOf(%q) = %q, want empty", s, got)
		}
	}
}
