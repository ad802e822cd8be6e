package llmserve

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/policy"
)

// TokenID is the toy token id of action a: FNV-1a of its text, top bit
// cleared (an int32 ≥ 0).
func TokenID(a string) int32 {
	h := fnv.New32a()
	h.Write([]byte(a))
	return int32(h.Sum32() & 0x7fffffff)
}

// samplingParams are a request's validated sampling parameters.
type samplingParams struct {
	n           int
	temperature *float64
	seed        int64
	turn        int
	top         int
}

func readSampling(req llm.ChatRequest, turn int) (samplingParams, error) {
	sp := samplingParams{n: max(req.N, 1), temperature: req.Temperature, turn: turn, top: req.TopLogprobs}
	switch {
	case req.N < 0 || req.N > MaxChoices:
		return sp, badParam("n", "invalid_n", "n = %d: want 1..%d", req.N, MaxChoices)
	case req.Temperature != nil && (math.IsNaN(*req.Temperature) || *req.Temperature < 0 || *req.Temperature > 100):
		return sp, badParam("temperature", "invalid_temperature", "temperature %v: want 0 (greedy) up to 100", *req.Temperature)
	case req.TopLogprobs < 0 || req.TopLogprobs > MaxTopLogprobs:
		return sp, badParam("top_logprobs", "invalid_top_logprobs", "top_logprobs %d: want 0..%d", req.TopLogprobs, MaxTopLogprobs)
	case req.MaxTokens < 0:
		return sp, badParam("max_tokens", "invalid_max_tokens", "max_tokens %d is negative", req.MaxTokens)
	case req.MaxCompletionTokens < 0:
		return sp, badParam("max_completion_tokens", "invalid_max_tokens", "max_completion_tokens %d is negative", req.MaxCompletionTokens)
	case req.StreamOptions != nil && !req.Stream:
		return sp, badParam("stream_options", "invalid_stream_options", "stream_options is only allowed when stream is true")
	}
	if req.Seed != nil {
		sp.seed = *req.Seed
	} else {
		sp.seed = rand.Int64()
	}
	return sp, nil
}

// answer samples sp.n actions of st from p and writes them as choices.
func (s *Server) answer(req llm.ChatRequest, p *policy.Policy, st *policy.State, sp samplingParams) (*llm.ChatResponse, error) {
	greedy := sp.temperature != nil && *sp.temperature == 0
	if sp.temperature != nil && *sp.temperature > 0 {
		var err error
		if p, err = p.WithTemperature(*sp.temperature); err != nil {
			return nil, badParam("temperature", "invalid_temperature", "%v", err)
		}
	}
	probs, logProbs, err := p.Distribution(st)
	if err != nil {
		return nil, badParam("messages", "unparsable_conversation", "the policy cannot read the state: %v", err)
	}
	resp := &llm.ChatResponse{ID: fmt.Sprintf("chatcmpl-rspo-%d", s.seq.Add(1)), Object: "chat.completion",
		Created: s.now().Unix(), Model: req.Model, Choices: make([]llm.ChatChoice, sp.n)}
	for i := range sp.n {
		idx := policy.Argmax(probs)
		if !greedy {
			idx = policy.SampleIndex(probs, choiceRand(sp, i))
		}
		resp.Choices[i] = choiceOf(req, i, st.Admissible, idx, logProbs, sp.top)
	}
	resp.Usage = &llm.Usage{PromptTokens: promptWords(req.Messages), CompletionTokens: sp.n}
	resp.Usage.TotalTokens = resp.Usage.PromptTokens + resp.Usage.CompletionTokens
	return resp, nil
}

// choiceRand is the random source of choice i: for the first, the
// built-in rollout's source at the request's turn; for the others a
// stream of their own.
func choiceRand(sp samplingParams, i int) policy.Rand {
	if i > 0 {
		return rand.New(rand.NewPCG(uint64(sp.seed), uint64(i)))
	}
	rng := policy.RolloutRand(llm.EpisodeSeed(sp.seed, sp.turn))
	for range sp.turn {
		rng.Float64()
	}
	return rng
}

// choiceOf is choice i: action idx with its log-prob as the one token.
func choiceOf(req llm.ChatRequest, i int, acts []string, idx int, logProbs []float64, top int) llm.ChatChoice {
	a := acts[idx]
	c := llm.ChatChoice{Index: i, Message: llm.ChatMessage{Role: "assistant", Content: a}, FinishReason: "stop"}
	if req.ReturnTokenIDs {
		c.TokenIDs = []int64{int64(TokenID(a))}
	}
	if !req.Logprobs {
		return c
	}
	tok := llm.TokenLogprob{Token: tokenText(req, a), Logprob: logProbs[idx], Bytes: byteInts(a), TopLogprobs: []llm.TopLogprob{}}
	order := make([]int, len(acts))
	for j := range order {
		order[j] = j
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmpDesc(logProbs[x], logProbs[y]) })
	for _, j := range order[:min(top, len(order))] {
		tok.TopLogprobs = append(tok.TopLogprobs, llm.TopLogprob{Token: tokenText(req, acts[j]), Logprob: logProbs[j], Bytes: byteInts(acts[j])})
	}
	c.Logprobs = &llm.ChoiceLogprobs{Content: []llm.TokenLogprob{tok}}
	return c
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

func tokenText(req llm.ChatRequest, a string) string {
	if req.ReturnTokensAsTokenIDs {
		return llm.TokenIDString(TokenID(a))
	}
	return a
}

func byteInts(s string) []int {
	out := make([]int, len(s))
	for i := range len(s) {
		out[i] = int(s[i])
	}
	return out
}

func promptWords(msgs []llm.ChatMessage) int {
	n := 0
	for _, m := range msgs {
		n += len(strings.Fields(m.Content))
	}
	return n
}
