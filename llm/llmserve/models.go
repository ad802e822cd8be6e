package llmserve

import (
	"net/http"
	"slices"
	"strings"

	"github.com/rspo-dev/rspo/llm"
)

// modelsPrefix starts the path of GET /v1/models/{model}; the model's
// name is the rest of the path, slashes included (Qwen/Qwen2.5-7B).
const modelsPrefix = "/v1/models/"

// ModelList is the answer of GET /v1/models.
type ModelList struct {
	Object string      `json:"object"`
	Data   []ModelInfo `json:"data"`
}

// ModelInfo describes one served model: an entry of GET /v1/models and
// the answer of GET /v1/models/{model}.
type ModelInfo struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// cards lists every served model, the embedding model included, sorted.
func (s *Server) cards() []ModelInfo {
	s.mu.RLock()
	out := make([]ModelInfo, 0, len(s.models)+1)
	for name, m := range s.models {
		out = append(out, ModelInfo{ID: name, Object: "model", Created: m.created, OwnedBy: "rspo"})
	}
	if s.embed != nil {
		c := s.embed.ModelCard()
		out = append(out, ModelInfo{ID: c.ID, Object: c.Object, Created: c.Created, OwnedBy: c.OwnedBy})
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b ModelInfo) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func (s *Server) list(w http.ResponseWriter, _ *http.Request) {
	llm.WriteJSON(w, http.StatusOK, ModelList{Object: "list", Data: s.cards()})
}

// retrieve answers GET /v1/models/{model}: the model's card, or a 404
// model_not_found.
func (s *Server) retrieve(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, modelsPrefix)
	cards := s.cards()
	i := slices.IndexFunc(cards, func(c ModelInfo) bool { return c.ID == name })
	if i < 0 {
		served := make([]string, len(cards))
		for j, c := range cards {
			served[j] = c.ID
		}
		writeError(w, unknownModel(name, served))
		return
	}
	llm.WriteJSON(w, http.StatusOK, cards[i])
}
