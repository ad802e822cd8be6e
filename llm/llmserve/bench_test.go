package llmserve_test

import (
	"context"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
)

// BenchmarkPlayerOverhead plays the same household easy episodes with the
// built-in policy in-process (rollout.PolicyPlayer) and through the
// chat-completions protocol to llmserve over loopback HTTP (llm.Player),
// one episode at a time, and reports the steps per second of each and
// their ratio: the cost of a turn's request, its JSON and the template,
// over the policy's own forward pass.
func BenchmarkPlayerOverhead(b *testing.B) {
	f := newFixture(b, 4)
	pl, err := llm.NewPlayer(f.ep, llm.ChatConfig{}, "pi", f.p.Version())
	if err != nil {
		b.Fatal(err)
	}
	eps := f.episodes(policy.RolloutOptions{})
	ctx := context.Background()
	var builtin, served time.Duration
	var steps int64
	for b.Loop() {
		start := time.Now()
		want, err := rollout.All(ctx, f.env, rollout.PolicyPlayer{Policy: f.p}, eps, 1)
		if err != nil {
			b.Fatal(err)
		}
		builtin += time.Since(start)
		start = time.Now()
		if _, err := rollout.All(ctx, f.env, pl, eps, 1); err != nil {
			b.Fatal(err)
		}
		served += time.Since(start)
		steps += rollout.EnvSteps(want)
	}
	b.ReportMetric(float64(steps)/builtin.Seconds(), "builtin-steps/s")
	b.ReportMetric(float64(steps)/served.Seconds(), "llm-steps/s")
	b.ReportMetric(served.Seconds()/builtin.Seconds(), "llm/builtin-time")
	b.ReportMetric(float64(served-builtin)/float64(steps)/1e3, "overhead-µs/step")
}
