package schemas

import (
	"encoding/json"
	"testing"
)

// The benchmarks encode and decode one realistic 32-step trajectory (40-word
// observations, 25 admissible actions of 4 words) with Arrow IPC and, for
// comparison, encoding/json. Both paths validate, as the pipeline does.
// Run: go test ./schemas -run '^$' -bench . -benchtime 2s

const benchSteps = 32

func reportCodec(b *testing.B, n, size int) {
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "traj/s")
	b.ReportMetric(float64(size), "B/msg")
}

func BenchmarkEncodeTrajectory(b *testing.B) {
	t := realistic(benchSteps)
	n, size := 0, 0
	b.ReportAllocs()
	for b.Loop() {
		out, err := EncodeTrajectory(t)
		if err != nil {
			b.Fatal(err)
		}
		n, size = n+1, len(out)
	}
	reportCodec(b, n, size)
}

func BenchmarkDecodeTrajectory(b *testing.B) {
	msg, err := EncodeTrajectory(realistic(benchSteps))
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeTrajectory(msg); err != nil {
			b.Fatal(err)
		}
		n++
	}
	reportCodec(b, n, len(msg))
}

func BenchmarkEncodeTrajectoryJSON(b *testing.B) {
	t := realistic(benchSteps)
	n, size := 0, 0
	b.ReportAllocs()
	for b.Loop() {
		if err := t.Validate(); err != nil {
			b.Fatal(err)
		}
		out, err := json.Marshal(t)
		if err != nil {
			b.Fatal(err)
		}
		n, size = n+1, len(out)
	}
	reportCodec(b, n, size)
}

func BenchmarkDecodeTrajectoryJSON(b *testing.B) {
	msg, err := json.Marshal(realistic(benchSteps))
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		var t Trajectory
		if err := json.Unmarshal(msg, &t); err != nil {
			b.Fatal(err)
		}
		if err := t.Validate(); err != nil {
			b.Fatal(err)
		}
		n++
	}
	reportCodec(b, n, len(msg))
}

func BenchmarkValidate(b *testing.B) {
	t := realistic(benchSteps)
	n := 0
	for b.Loop() {
		if err := t.Validate(); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "traj/s")
}

func BenchmarkDecodeTrajectoryBatch(b *testing.B) {
	ts := make([]*Trajectory, 16)
	for i := range ts {
		ts[i] = realistic(benchSteps)
	}
	msg, err := EncodeTrajectoryBatch(ts)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeTrajectoryBatch(msg); err != nil {
			b.Fatal(err)
		}
		n += len(ts)
	}
	reportCodec(b, n, len(msg))
}
