package prm

import "github.com/rspo-dev/rspo/schemas"

// Evaluation measures how well trajectory scores R̂ track outcomes R on a
// set of trajectories: how informative a PRM is there.
type Evaluation struct {
	// Trajectories and Successes count the set.
	Trajectories int `json:"trajectories"`
	Successes    int `json:"successes"`
	// MSE is the unweighted mean of (R̂ − R)².
	MSE float64 `json:"mse"`
	// Spearman is the rank correlation of R̂ with R (0 when undefined).
	Spearman float64 `json:"spearman"`
	// AUC is the AUC of R̂ for success vs failure (0.5 when undefined).
	AUC float64 `json:"auc"`
	// MeanScoreSuccess and MeanScoreFailure are the mean R̂ per class.
	MeanScoreSuccess float64 `json:"mean_score_success"`
	MeanScoreFailure float64 `json:"mean_score_failure"`
}

// Evaluate scores every trajectory with m (Model.TrajectoryScore: R̂, or
// the mean step score of a step-target model) and compares it with the
// outcome.
func Evaluate(m *Model, trajs []*schemas.Trajectory) Evaluation {
	scores := make([]float64, len(trajs))
	outcome := make([]float64, len(trajs))
	success := make([]bool, len(trajs))
	for i, t := range trajs {
		scores[i] = m.TrajectoryScore(t)
		outcome[i], success[i] = t.OutcomeReward, t.Success
	}
	return evaluation(scores, outcome, success)
}

func evaluation(scores, outcome []float64, success []bool) Evaluation {
	e := Evaluation{
		Trajectories: len(scores),
		MSE:          MSE(scores, outcome),
		Spearman:     Spearman(scores, outcome),
		AUC:          AUC(scores, success),
	}
	var sumS, sumF float64
	for i, s := range success {
		if s {
			e.Successes++
			sumS += scores[i]
		} else {
			sumF += scores[i]
		}
	}
	if e.Successes > 0 {
		e.MeanScoreSuccess = sumS / float64(e.Successes)
	}
	if f := e.Trajectories - e.Successes; f > 0 {
		e.MeanScoreFailure = sumF / float64(f)
	}
	return e
}
