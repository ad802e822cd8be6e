package llm_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/prm"
)

// An embedding function (counting a and o: 4 and 6 here) served in
// OpenAI's shape, and a PRM featurizer reading it: the features of a step
// are its rendered text's embedding, scaled to unit length.
func Example() {
	h, err := llm.NewEmbedHandler(llm.EmbedHandlerConfig{Model: "letters", Embed: func(text string) []float32 {
		return []float32{float32(strings.Count(text, "a")), float32(strings.Count(text, "o"))}
	}})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	feat, err := llm.NewEmbeddingsFeaturizer(llm.EmbeddingsFeaturizerConfig{URL: srv.URL + "/v1", Model: "letters", Dim: 2})
	if err != nil {
		panic(err)
	}
	step := prm.StepText{Instruction: "cool a mug", Observation: "You see a fridge.", Action: "open fridge 1"}
	fmt.Printf("%q\n", feat.Render(step))
	dst := make([]float32, 2)
	if err := feat.FeaturesBatch(context.Background(), []prm.StepText{step, step}, append(dst, 0, 0)); err != nil {
		panic(err)
	}
	feat.Features(step.Instruction, step.Observation, step.Action, dst)
	st := feat.Stats()
	fmt.Printf("features %.2f, %d lookups, %d hits, %d request\n", dst, st.Lookups, st.Hits, st.Requests)
	// Output:
	// "Task: cool a mug\nObservation: You see a fridge.\nAction: open fridge 1"
	// features [0.55 0.83], 3 lookups, 2 hits, 1 request
}
