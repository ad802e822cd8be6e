package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"

	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/rollout"
)

// chat asks a chat-completions server for actions.
type chat struct {
	ep  *Endpoint
	r   *Renderer
	cfg ChatConfig
}

func newChat(ep *Endpoint, cfg ChatConfig) (*chat, error) {
	if ep == nil {
		return nil, fmt.Errorf("llm: no endpoint")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	r, err := NewRenderer(cfg.Template)
	if err != nil {
		return nil, err
	}
	return &chat{ep: ep, r: r, cfg: cfg}, nil
}

// sampling is how one turn samples.
type sampling struct {
	seed        int64
	temperature float64 // > 0 sets it; 0 leaves the server's default
	greedy      bool
	tilt        policy.ActionScorer
	lambda      float64
}

func (sp sampling) tilted() bool { return sp.tilt != nil && sp.lambda > 0 }

// choice is the action a turn takes and what is recorded of it.
type choice struct {
	action        string
	index         int
	logProb       float64
	tokenIDs      []int32
	tokenLogProbs []float32
}

// request builds the chat request of state s.
func (c *chat) request(model string, s *policy.State, sp sampling, n int) (ChatRequest, error) {
	msgs, err := c.r.Render(s)
	if err != nil {
		return ChatRequest{}, err
	}
	req := ChatRequest{Model: model, Messages: msgs, MaxTokens: c.cfg.MaxTokens, Seed: &sp.seed, Logprobs: true,
		ReturnTokensAsTokenIDs: c.cfg.TokenIDs == TokenIDStrings, ReturnTokenIDs: c.cfg.TokenIDs == TokenIDField}
	if n > 1 {
		req.N = n
	}
	switch {
	case sp.greedy:
		zero := 0.0
		req.Temperature = &zero
	case sp.temperature > 0:
		t := sp.temperature
		req.Temperature = &t
	}
	return req, nil
}

// choose asks for the action of state s: one completion, or with a tilt
// Candidates completions resampled (see Player).
func (c *chat) choose(ctx context.Context, model string, s *policy.State, sp sampling) (choice, error) {
	n := 1
	if sp.tilted() {
		n = c.cfg.Candidates
	}
	req, err := c.request(model, s, sp, n)
	if err != nil {
		return choice{}, err
	}
	var resp ChatResponse
	if err := c.ep.PostJSON(ctx, "/chat/completions", req, &resp); err != nil {
		return choice{}, unavailable(err)
	}
	if len(resp.Choices) != n {
		return choice{}, fmt.Errorf("llm: /chat/completions answered %d choices for n = %d", len(resp.Choices), n)
	}
	cands := make([]choice, n)
	for i, ch := range resp.Choices {
		comp, err := ParseCompletion(ch, c.cfg.TokenIDs)
		if err != nil {
			return choice{}, err
		}
		a, idx := ParseAction(comp.Text, s.Admissible)
		cands[i] = choice{action: a, index: idx, logProb: comp.LogProb, tokenIDs: comp.TokenIDs, tokenLogProbs: comp.TokenLogProbs}
	}
	if !sp.tilted() {
		cands[0].logProb = clampLogProb(cands[0].logProb)
		return cands[0], nil
	}
	return resample(cands, s, sp), nil
}

// unavailable marks a failed request as rollout.ErrUnavailable unless the
// server refused the request itself (400, 422: retrying cannot help).
func unavailable(err error) error {
	var se *StatusError
	if errors.As(err, &se) && (se.Code == http.StatusBadRequest || se.Code == http.StatusUnprocessableEntity) {
		return err
	}
	return fmt.Errorf("%w: %w", rollout.ErrUnavailable, err)
}

// sirStream is the PCG stream of the resampling draw.
const sirStream = 0x7369722d74696c74

// resample picks one candidate with weights exp(λ·score) and records the
// SIR estimate of its tilted log-prob: log π(a) + λ·score(a) − log Ẑ.
func resample(cands []choice, s *policy.State, sp sampling) choice {
	acts := make([]string, len(cands))
	for i, c := range cands {
		acts[i] = c.action
	}
	scores := make([]float64, len(cands))
	sp.tilt.ScoreActions(s.Instruction, s.Observation, acts, scores)
	logW := make([]float64, len(cands))
	for i, v := range scores {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			logW[i] = sp.lambda * v
		}
	}
	logMean := logSumExp(logW) - math.Log(float64(len(logW)))
	probs := make([]float64, len(logW))
	for i, lw := range logW {
		probs[i] = math.Exp(lw - logMean - math.Log(float64(len(logW))))
	}
	rng := rand.New(rand.NewPCG(uint64(sp.seed), sirStream))
	j := policy.SampleIndex(probs, rng)
	out := cands[j]
	out.logProb = clampLogProb(out.logProb + logW[j] - logMean)
	return out
}

func logSumExp(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = max(m, x)
	}
	s := 0.0
	for _, x := range v {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}
