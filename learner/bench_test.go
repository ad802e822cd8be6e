package learner

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/schemas"
)

// benchUpdate measures one update of B = 16 tasks × N = 8 rollouts with the
// default policy and the given config, on one core (GOMAXPROCS is set to
// cfg.Workers, default 1).
func benchUpdate(b *testing.B, batch []*schemas.Trajectory, cfg Config) {
	b.Helper()
	prev := runtime.GOMAXPROCS(max(cfg.Workers, 1))
	defer runtime.GOMAXPROCS(prev)
	p, err := policy.New(policy.Config{})
	if err != nil {
		b.Fatal(err)
	}
	tr := newTrainer(b, p, cfg)
	steps := 0
	for _, t := range batch {
		steps += len(t.Steps)
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		if _, err := tr.Update(batch, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/update")
	// CPU time is the robust figure on a shared machine: the update is
	// single-threaded, so it is what the wall time would be on an idle core.
	b.ReportMetric((cpuTime()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/update")
	b.ReportMetric(float64(steps), "steps/batch")
}

// BenchmarkUpdate: B = 16 household tasks × N = 8 rollouts of the untrained
// policy (the longest episodes: every one runs to the step limit).
func BenchmarkUpdate(b *testing.B) {
	for _, preset := range []string{"easy", "alfworld"} {
		env, err := envs.New("household", map[string]string{"preset": preset})
		if err != nil {
			b.Fatal(err)
		}
		tasks, err := env.Tasks(envs.SplitTrain, 16, 1)
		if err != nil {
			b.Fatal(err)
		}
		p, _ := policy.New(policy.Config{})
		batch := collect(b, env, tasks, p, 8, 1, schemas.SourceOnPolicy)
		for _, c := range []struct {
			name string
			cfg  Config
		}{
			{"grpo", Config{}},
			{"ppo", Config{Algo: PPO}},
			{"grpo-4epochs", Config{Epochs: 4}},
			{"grpo-2workers", Config{Workers: 2}},
		} {
			b.Run(preset+"/"+c.name, func(b *testing.B) { benchUpdate(b, batch, c.cfg) })
		}
	}
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkUpdateSize measures one update of B tasks × 8 rollouts of
// the default preset, labelled with dense rewards so that every step has
// a gradient. Its cpu-ns/step should not depend on B.
func BenchmarkUpdateSize(b *testing.B) {
	env, err := envs.New("household", nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, tasksPerBatch := range []int{16, 64} {
		tasks, err := env.Tasks(envs.SplitTrain, tasksPerBatch, 1)
		if err != nil {
			b.Fatal(err)
		}
		p, _ := policy.New(policy.Config{})
		batch := collect(b, env, tasks, p, 8, 1, schemas.SourceOnPolicy)
		labelDense(batch)
		for _, c := range []struct {
			name string
			cfg  Config
		}{
			{"grpo", Config{Rewards: RewardDense}},
			{"gigpo", Config{Algo: GiGPO, Rewards: RewardDense}},
			{"ppo", Config{Algo: PPO, Rewards: RewardDense}},
		} {
			b.Run(fmt.Sprintf("%s/%dx8", c.name, tasksPerBatch), func(b *testing.B) { benchUpdateSteps(b, batch, c.cfg) })
		}
	}
}

// benchUpdateSteps is benchUpdate with the CPU time per step of the batch.
func benchUpdateSteps(b *testing.B, batch []*schemas.Trajectory, cfg Config) {
	steps := 0
	for _, t := range batch {
		steps += len(t.Steps)
	}
	p, _ := policy.New(policy.Config{})
	tr := newTrainer(b, p, cfg)
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		if _, err := tr.Update(batch, nil); err != nil {
			b.Fatal(err)
		}
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(cpu.Seconds()*1000/float64(b.N), "cpu-ms/update")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*steps), "cpu-ns/step")
	b.ReportMetric(float64(steps), "steps/batch")
}

// BenchmarkWireBatch measures what the external-trainer protocol adds to an
// update of B = 16 household tasks × N = 8 rollouts (alfworld preset,
// untrained policy): Export, the Arrow encode and decode, and Import (which
// featurises again), against the update itself (Assemble + Apply).
func BenchmarkWireBatch(b *testing.B) {
	env, err := envs.New("household", map[string]string{"preset": "alfworld"})
	if err != nil {
		b.Fatal(err)
	}
	tasks, err := env.Tasks(envs.SplitTrain, 16, 1)
	if err != nil {
		b.Fatal(err)
	}
	p, _ := policy.New(policy.Config{})
	batch := collect(b, env, tasks, p, 8, 1, schemas.SourceOnPolicy)
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	asm := newTrainer(b, p, Config{})
	tr := newTrainer(b, p, Config{})
	ab, err := asm.Assemble(batch, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("wire", func(b *testing.B) {
		var size int
		cpu0 := cpuTime()
		for range b.N {
			w, err := ab.Export("bench", 0)
			if err != nil {
				b.Fatal(err)
			}
			data, err := schemas.EncodeTrainBatch(w)
			if err != nil {
				b.Fatal(err)
			}
			back, err := schemas.DecodeTrainBatch(data)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tr.Import(back); err != nil {
				b.Fatal(err)
			}
			size = len(data)
		}
		b.ReportMetric((cpuTime()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/batch")
		b.ReportMetric(float64(size)/(1<<20), "MiB/batch")
		b.ReportMetric(float64(len(ab.samples)), "trajectories/batch")
	})
	b.Run("update", func(b *testing.B) {
		cpu0 := cpuTime()
		for range b.N {
			up := newTrainer(b, p.Clone(), Config{})
			if _, err := up.Update(batch, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric((cpuTime()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/update")
	})
}
