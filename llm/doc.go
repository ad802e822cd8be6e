// Package llm connects rspo to policies and feature models behind an
// OpenAI-compatible inference server (vLLM, SGLang, or `rspo serve policy`):
// the HTTP transport every call shares (Endpoint: timeouts, retries,
// a concurrency limit, the API key), the embeddings client the PRM's
// LLM-feature featurizer uses, and the chat-completions backend that
// plays episodes for actors, explorers and evaluation.
//
// It knows nothing of NATS; the services wire it to the bus. See
// docs/llm.md for pointing actors at a server and the fields it must
// return.
package llm
