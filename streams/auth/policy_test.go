package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/auth"
)

// TestAuthPolicyServerIsolated: `rspo serve policy`'s user reads its run's
// policy snapshots (not another run's, nor the PRM's) and stores dead
// letters on rspo.<run>.dlq.policy.
func TestAuthPolicyServerIsolated(t *testing.T) {
	s := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, run := range []string{"ra", "rb"} {
		_, ljs, _ := s.conn(run, auth.Learner)
		if err := streams.PutSnapshot(ctx, ljs, streams.BucketPolicy, streams.PolicyObject(run, 1), []byte(run)); err != nil {
			t.Fatal(err)
		}
	}
	_, js, v := s.conn("ra", auth.Policy)
	if b, err := streams.GetSnapshot(ctx, js, streams.BucketPolicy, streams.PolicyObject("ra", 1)); err != nil || string(b) != "ra" {
		t.Errorf("own snapshot: %q, %v", b, err)
	}
	if b, err := streams.GetSnapshot(ctx, js, streams.BucketPolicy, streams.PolicyObject("rb", 1)); err == nil {
		t.Errorf("read run rb's snapshot: %q", b)
	}
	if _, err := streams.Publish(ctx, js, streams.Subjects("ra").DLQ(auth.Policy), []byte("forged"), nil); err != nil {
		t.Errorf("dead letter: %v", err)
	}
	if got := v.list(); len(got) > 0 {
		t.Errorf("permission violations: %v", got)
	}
	short, stop := context.WithTimeout(ctx, time.Second)
	defer stop()
	if _, err := streams.GetSnapshot(short, js, streams.BucketPRM, streams.PRMObject("ra", 1)); err == nil {
		t.Error("the policy server read the PRM bucket")
	}
}
