package llm

import (
	"context"
	"testing"

	"github.com/rspo-dev/rspo/prm"
)

// BenchmarkFeaturizeHousehold featurizes every step of the recorded
// household trajectories: with the hash projection in process, and through
// the embeddings featurizer over HTTP (an httptest server embedding with
// the hash projection) with a cold cache — the steps of a training set,
// 1024 per call as the dataset builds them — a warm one, and per state as a
// tilted rollout asks (every admissible action of a state in one call).
// It reports steps/s and the cache hit rate.
func BenchmarkFeaturizeHousehold(b *testing.B) {
	const dim = 256
	trajs := householdTrajectories(b)
	var steps []prm.StepText
	var states [][]prm.StepText
	actions := 0
	for _, tr := range trajs {
		for _, s := range tr.Steps {
			steps = append(steps, prm.StepText{Instruction: tr.Instruction, Observation: s.Observation, Action: s.Action})
			var st []prm.StepText
			for _, a := range s.Admissible {
				st = append(st, prm.StepText{Instruction: tr.Instruction, Observation: s.Observation, Action: a})
			}
			states = append(states, st)
			actions += len(st)
		}
	}
	ctx := context.Background()
	dst := make([]float32, 1024*dim)
	batches := func(b *testing.B, f *EmbeddingsFeaturizer) {
		for lo := 0; lo < len(steps); lo += 1024 {
			chunk := steps[lo:min(len(steps), lo+1024)]
			if err := f.FeaturesBatch(ctx, chunk, dst[:len(chunk)*dim]); err != nil {
				b.Fatal(err)
			}
		}
	}
	report := func(b *testing.B, n int, st EmbeddingsStats, requests int64) {
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "steps/s")
		b.ReportMetric(st.HitRate(), "hit-rate")
		b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
	}

	b.Run("hash", func(b *testing.B) {
		hp := prm.DefaultFeaturizer()
		for b.Loop() {
			for _, s := range steps {
				hp.Features(s.Instruction, s.Observation, s.Action, dst[:dim])
			}
		}
		report(b, len(steps), EmbeddingsStats{}, 0)
	})
	b.Run("http-cold", func(b *testing.B) {
		srv := newEmbedServer(b, dim)
		var st EmbeddingsStats
		for b.Loop() {
			f := newTestFeaturizer(b, srv, dim, nil)
			batches(b, f)
			s := f.Stats()
			st.Lookups, st.Hits = st.Lookups+s.Lookups, st.Hits+s.Hits
		}
		report(b, len(steps), st, srv.requests.Load())
	})
	b.Run("http-warm", func(b *testing.B) {
		srv := newEmbedServer(b, dim)
		f := newTestFeaturizer(b, srv, dim, nil)
		batches(b, f)
		before, reqs := f.Stats(), srv.requests.Load()
		for b.Loop() {
			batches(b, f)
		}
		after := f.Stats()
		report(b, len(steps), EmbeddingsStats{Lookups: after.Lookups - before.Lookups, Hits: after.Hits - before.Hits}, srv.requests.Load()-reqs)
	})
	b.Run("http-tilt-cold", func(b *testing.B) {
		srv := newEmbedServer(b, dim)
		var st EmbeddingsStats
		x := make([]float32, 64*dim)
		for b.Loop() {
			f := newTestFeaturizer(b, srv, dim, nil)
			for _, s := range states {
				x = append(x[:0], make([]float32, len(s)*dim)...)
				if err := f.FeaturesBatch(ctx, s, x); err != nil {
					b.Fatal(err)
				}
			}
			s := f.Stats()
			st.Lookups, st.Hits = st.Lookups+s.Lookups, st.Hits+s.Hits
		}
		report(b, actions, st, srv.requests.Load())
	})
}
