package prm

// Gate reports whether an explorer should shape with a PRM whose held-out
// AUC is auc, given a threshold: at or above it the dense reward is used,
// below it the explorer should behave as a plain copy of the policy, so a
// flat PRM never turns into noise. A threshold ≤ 0 disables the gate (always
// shape), which is also how the random-PRM control is run.
func Gate(auc, threshold float64) bool {
	return threshold <= 0 || auc >= threshold
}

// ShapingEnabled applies Gate to the model's recorded held-out AUC; see
// ModelInfo.ShapingEnabled.
func (m *Model) ShapingEnabled(threshold float64) bool { return m.Info.ShapingEnabled(threshold) }

// ShapingEnabled applies Gate to the recorded held-out AUC. An untrained
// model (or one trained without both a success and a failure held out) has
// no evidence of being informative and passes only a disabled gate. A remote
// explorer gets the Info with every scoring reply (prmsvc.ScoreReply).
func (i ModelInfo) ShapingEnabled(threshold float64) bool {
	if threshold <= 0 {
		return true
	}
	informed := i.Trained && i.HeldoutSuccesses > 0 && i.HeldoutSuccesses < i.Heldout
	return informed && Gate(i.HeldoutAUC, threshold)
}
