// Package metrics exports what a process of a run does as Prometheus
// metrics: per stage, the messages its consumers handled, retried and
// dead-lettered; the latency of the learner's buffer samples and of PRM
// scoring; the learner's progress (update, policy version, success rates,
// environment steps); and the Go runtime's and the process's own.
//
// Metrics collects them and Listen serves them on /metrics. The stages
// report through hooks of their packages (streams.Counters and the
// services' observers), so none of them depends on Prometheus.
// docs/metrics.md lists every metric.
package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/streams"
)

// Metrics holds the collectors of one run in one process. Its methods are
// safe for concurrent use.
type Metrics struct {
	reg                    *prometheus.Registry
	handled, retried, dead *prometheus.CounterVec
	sample, score          prometheus.Histogram
	sampleErrors, scored   prometheus.Counter
	learner                learnerSeries
}

// learnerSeries are the learner's progress: gauges for what goes up and
// down, counters for the running counts, which only grow.
type learnerSeries struct {
	updates, version, trainSuccess, evalSuccess, versionLag prometheus.Gauge
	done, envSteps, staleRefused, refused, shortCycles      *runningCount
}

// runningCount is a counter fed with the running total the learner
// reports rather than with increments: it adds what the total grew by.
type runningCount struct {
	mu   sync.Mutex
	c    prometheus.Counter
	last int64
}

// set raises the counter to total; a lower total (none expected: the
// counts a learner reports never fall) is ignored.
func (r *runningCount) set(total int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if total > r.last {
		r.c.Add(float64(total - r.last))
		r.last = total
	}
}

// latencyBuckets span a millisecond to a minute: a sample from a local
// buffer takes milliseconds, one retried against a restarting one a minute.
var latencyBuckets = prometheus.ExponentialBuckets(0.001, 2.5, 13)

// New returns the collectors of run, every metric labelled run="<run>".
func New(run string) *Metrics {
	reg := prometheus.NewRegistry()
	r := prometheus.WrapRegistererWith(prometheus.Labels{"run": run}, reg)
	f := factory{r}
	m := &Metrics{reg: reg,
		handled:      f.stageCounter("rspo_stage_messages_handled_total", "Messages a stage's consumers handled and acknowledged."),
		retried:      f.stageCounter("rspo_stage_messages_retried_total", "Messages given back for redelivery after a stage's handler failed."),
		dead:         f.stageCounter("rspo_stage_messages_dead_lettered_total", "Messages a stage's consumers sent to the dead-letter queue."),
		sample:       f.histogram("rspo_buffer_sample_seconds", "Duration of the learner's buffer sample calls, retries included."),
		sampleErrors: f.counter("rspo_buffer_sample_errors_total", "Buffer sample calls of the learner that failed."),
		score:        f.histogram("rspo_prm_score_seconds", "Duration of scoring one request of the PRM scoring stage."),
		scored:       f.counter("rspo_prm_scored_trajectories_total", "Trajectories the PRM scoring stage scored."),
		learner: learnerSeries{
			done:         f.runningCount("rspo_learner_updates_total", "Learner updates the run has done."),
			updates:      f.gauge("rspo_learner_updates_planned", "Learner updates the run is configured to do."),
			version:      f.gauge("rspo_learner_policy_version", "Latest policy version the learner published."),
			trainSuccess: f.gauge("rspo_learner_train_success_rate", "Success rate of the latest update's on-policy batch."),
			evalSuccess:  f.gauge("rspo_learner_eval_success_rate", "Success rate of the latest evaluation (first eval split)."),
			envSteps:     f.runningCount("rspo_learner_env_steps_total", "Training environment steps the run has taken, actors' and explorers'."),
			versionLag:   f.gauge("rspo_learner_version_lag", "Policy versions the latest update's oldest on-policy rollout lagged behind the policy it trained."),
			staleRefused: f.runningCount("rspo_learner_stale_refused_total", "On-policy trajectories this learner process refused as older than --max-staleness allows."),
			refused:      f.runningCount("rspo_learner_refused_trajectories_total", "On-policy trajectories and buffer records this learner process refused as implausible or not the run's own (dead-lettered)."),
			shortCycles:  f.runningCount("rspo_learner_short_cycles_total", "RSPO cycles the run trained without all their exploration (explorers or buffer past the explore timeout)."),
		},
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// factory registers collectors as it makes them.
type factory struct{ r prometheus.Registerer }

func (f factory) stageCounter(name, help string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"stage"})
	f.r.MustRegister(c)
	return c
}

func (f factory) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	f.r.MustRegister(c)
	return c
}

func (f factory) runningCount(name, help string) *runningCount {
	return &runningCount{c: f.counter(name, help)}
}

func (f factory) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	f.r.MustRegister(g)
	return g
}

func (f factory) histogram(name, help string) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: latencyBuckets})
	f.r.MustRegister(h)
	return h
}

// Gatherer is what Listen serves: the run's metrics and the process's.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

// Stage returns the counters of the stage called name, for its consumers
// (streams.ConsumerConfig.Counters). Its series exist from this call on,
// at zero until a message is settled.
func (m *Metrics) Stage(name string) streams.Counters {
	return stageCounters{m.handled.WithLabelValues(name), m.retried.WithLabelValues(name), m.dead.WithLabelValues(name)}
}

// stageCounters are one stage's series of the message counters.
type stageCounters struct{ handled, retried, dead prometheus.Counter }

func (c stageCounters) Handled()      { c.handled.Inc() }
func (c stageCounters) Retried()      { c.retried.Inc() }
func (c stageCounters) DeadLettered() { c.dead.Inc() }

// ObserveSample records one buffer sample call
// (learnersvc.Service.OnBufferSample).
func (m *Metrics) ObserveSample(d time.Duration, err error) {
	m.sample.Observe(d.Seconds())
	if err != nil {
		m.sampleErrors.Inc()
	}
}

// ObserveScore records one scored PRM request (prmsvc.Config.OnScore).
func (m *Metrics) ObserveScore(d time.Duration, trajectories int) {
	m.score.Observe(d.Seconds())
	m.scored.Add(float64(trajectories))
}

// Learner records the learner's progress (learnersvc.Service.OnProgress
// and OnPhase). Success rates below 0 mean none yet and are left as they
// are. The running counts are counters from the run's start: a resumed
// learner's first report raises them to the counts it resumed from.
func (m *Metrics) Learner(p learnersvc.Progress) {
	g := m.learner
	g.done.set(p.Update)
	g.updates.Set(float64(p.Updates))
	g.version.Set(float64(p.Version))
	g.envSteps.set(p.EnvSteps)
	if p.SuccessRate >= 0 {
		g.trainSuccess.Set(p.SuccessRate)
	}
	if p.Phase == learnersvc.PhaseUpdated {
		g.versionLag.Set(float64(p.VersionLagMax))
		g.staleRefused.set(p.StaleRefused)
		g.refused.set(p.Refused)
		g.shortCycles.set(p.ShortCycles)
	}
	if p.EvalSuccess >= 0 {
		g.evalSuccess.Set(p.EvalSuccess)
	}
}
