package rollout

import "github.com/rspo-dev/rspo/schemas"

// EvalEpisodes converts episode results to the form an evaluation result
// carries on the bus (schemas.EvalResult), in order.
func EvalEpisodes(results []EpisodeResult) []schemas.EvalEpisode {
	out := make([]schemas.EvalEpisode, len(results))
	for i, r := range results {
		out[i] = schemas.EvalEpisode{Type: r.Type, Success: r.Success, Score: r.Score, Steps: r.Steps, Inadmissible: r.Inadmissible}
	}
	return out
}

// EpisodeResults is the inverse of EvalEpisodes.
func EpisodeResults(eps []schemas.EvalEpisode) []EpisodeResult {
	out := make([]EpisodeResult, len(eps))
	for i, e := range eps {
		out[i] = EpisodeResult{Type: e.Type, Success: e.Success, Score: e.Score, Steps: e.Steps, Inadmissible: e.Inadmissible}
	}
	return out
}
