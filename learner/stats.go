package learner

import (
	"encoding/json"
	"math"
)

// UpdateStats are the figures of one update, reported separately for the
// on-policy and the off-policy (buffer) data. Ratios, clip fractions, KL and
// entropy are averaged over every step of every epoch; advantages and
// returns over the batch. Fields with no data (e.g. off-policy figures of a
// batch without buffer data) are 0.
type UpdateStats struct {
	Update        int64 `json:"update"`
	PolicyVersion int64 `json:"policy_version"`

	OnTrajectories  float64 `json:"on_trajectories"`
	OffTrajectories float64 `json:"off_trajectories"`
	OnSteps         float64 `json:"on_steps"`
	OffSteps        float64 `json:"off_steps"`

	// Loss is the minimised loss (−J_total plus the value and entropy
	// terms), averaged over the optimiser steps.
	Loss      float64 `json:"loss"`
	ValueLoss float64 `json:"value_loss"`
	// GradNorm is the gradient norm before clipping, averaged over the
	// optimiser steps; GradNormMax its largest value.
	GradNorm    float64 `json:"grad_norm"`
	GradNormMax float64 `json:"grad_norm_max"`

	RatioMeanOn  float64 `json:"ratio_mean_on"`
	RatioMeanOff float64 `json:"ratio_mean_off"`
	// CMeanOff is the mean centre c = π_old/π_B of the off-policy clip.
	CMeanOff    float64 `json:"c_mean_off"`
	ClipFracOn  float64 `json:"clip_frac_on"`
	ClipFracOff float64 `json:"clip_frac_off"`
	KLOn        float64 `json:"kl_on"`
	KLOff       float64 `json:"kl_off"`
	EntropyOn   float64 `json:"entropy_on"`
	EntropyOff  float64 `json:"entropy_off"`

	AdvMeanOn  float64 `json:"adv_mean_on"`
	AdvStdOn   float64 `json:"adv_std_on"`
	AdvMeanOff float64 `json:"adv_mean_off"`
	AdvStdOff  float64 `json:"adv_std_off"`

	ReturnMeanOn  float64 `json:"return_mean_on"`
	ReturnMeanOff float64 `json:"return_mean_off"`
	SuccessOn     float64 `json:"success_on"`
	SuccessOff    float64 `json:"success_off"`

	// AllFail/AllSuccess fractions count groups whose trajectories all
	// failed or all succeeded: on-policy groups by GroupID, off-policy
	// trajectories grouped by task.
	AllFailFracOn     float64 `json:"all_fail_frac_on"`
	AllSuccessFracOn  float64 `json:"all_success_frac_on"`
	AllFailFracOff    float64 `json:"all_fail_frac_off"`
	AllSuccessFracOff float64 `json:"all_success_frac_off"`
	// ZeroAdvGroupFrac is the fraction of normalisation groups (on-policy
	// groups with the buffer data joined) whose advantages are all zero.
	ZeroAdvGroupFrac float64 `json:"zero_adv_group_frac"`
	// OffFallback counts off-policy trajectories whose task had no
	// on-policy group (normalised by Config.OffPolicyFallback).
	OffFallback float64 `json:"off_fallback"`
	// OffLoopFrac is the fraction of off-policy steps on a loop (see
	// loopSteps), the steps OffCreditNoLoops gives no positive advantage;
	// it is measured under either rule.
	OffLoopFrac float64 `json:"off_loop_frac"`
	// ValueMean is the mean V_old(s) over on-policy steps.
	ValueMean float64 `json:"value_mean"`
	// SwapPairs counts the (step, partner) pairs of the optional swap term.
	SwapPairs float64 `json:"swap_pairs"`
}

// Map returns the figures by their JSON names, for metrics events.
func (s UpdateStats) Map() map[string]float64 {
	b, _ := json.Marshal(s)
	m := map[string]float64{}
	_ = json.Unmarshal(b, &m)
	return m
}

// optimisationFigures name the figures of an update that come from its
// optimisation rather than from the batch (see Optimisation).
var optimisationFigures = []string{"loss", "value_loss", "grad_norm", "grad_norm_max", "ratio_mean_on", "ratio_mean_off",
	"c_mean_off", "clip_frac_on", "clip_frac_off", "kl_on", "kl_off", "entropy_on", "entropy_off"}

// Optimisation returns the figures of the optimisation (loss, gradient
// norms, ratios, clip fractions, KL, entropy) by their JSON names: what a
// trainer that applied a batch reports beside the batch's own figures
// (Batch.Stats).
func (s UpdateStats) Optimisation() map[string]float64 {
	all := s.Map()
	m := make(map[string]float64, len(optimisationFigures))
	for _, k := range optimisationFigures {
		m[k] = all[k]
	}
	return m
}

// running accumulates a mean.
type running struct{ sum, n float64 }

func (r *running) add(v float64) { r.sum += v; r.n++ }

func (r *running) mean() float64 {
	if r.n == 0 {
		return 0
	}
	return r.sum / r.n
}

// moments accumulates a mean and a standard deviation.
type moments struct{ sum, sq, n float64 }

func (m *moments) add(v float64) { m.sum += v; m.sq += v * v; m.n++ }

func (m *moments) meanStd() (float64, float64) {
	if m.n == 0 {
		return 0, 0
	}
	mean := m.sum / m.n
	return mean, math.Sqrt(max(m.sq/m.n-mean*mean, 0))
}

// stepStats accumulates the per-step figures of one data kind.
type stepStats struct {
	ratio, clip, kl, entropy, c running
}

func (s *stepStats) merge(o *stepStats) {
	for i, r := range []*running{&s.ratio, &s.clip, &s.kl, &s.entropy, &s.c} {
		q := []*running{&o.ratio, &o.clip, &o.kl, &o.entropy, &o.c}[i]
		r.sum += q.sum
		r.n += q.n
	}
}
