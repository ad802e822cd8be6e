package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// APIKeyEnv names the environment variables an Endpoint reads its API key
// from when EndpointConfig.APIKey is empty, in order.
var APIKeyEnv = []string{"RSPO_OPENAI_API_KEY", "OPENAI_API_KEY"}

// EndpointConfig configures the connection to one inference server.
type EndpointConfig struct {
	// URL is the server's base URL including the API prefix, e.g.
	// http://localhost:8000/v1. Required.
	URL string
	// APIKey is sent as a bearer token. Default: the first non-empty
	// variable of APIKeyEnv; no header when there is none.
	APIKey string
	// Timeout bounds one HTTP attempt. Default 60s.
	Timeout time.Duration
	// Retries is how many times a failed attempt is retried (connection
	// errors, 408, 429 and 5xx answers), with jittered exponential
	// backoff from 100 ms. Default 3; −1 means none.
	Retries int
	// MaxConcurrent bounds the requests in flight at once. Default 16.
	MaxConcurrent int
	// MaxResponseBytes bounds a response body. Default 16 MiB.
	MaxResponseBytes int64
	// Client is the HTTP client. Default: one with no overall timeout
	// (Timeout bounds each attempt).
	Client *http.Client
}

// Endpoint is a connection to one OpenAI-compatible server. It is safe for
// concurrent use.
type Endpoint struct {
	cfg  EndpointConfig
	base *url.URL
	sem  chan struct{}
}

// NewEndpoint returns an endpoint for cfg, or an error saying what to fix.
func NewEndpoint(cfg EndpointConfig) (*Endpoint, error) {
	if cfg.URL == "" {
		return nil, errors.New("llm: endpoint URL is empty: give the server's base URL, e.g. http://localhost:8000/v1")
	}
	base, err := url.Parse(strings.TrimRight(cfg.URL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("llm: endpoint URL %q: want http(s)://host[:port]/prefix", cfg.URL)
	}
	var errs []error
	if cfg.Timeout < 0 {
		errs = append(errs, fmt.Errorf("llm: timeout %v is negative (0: the default 60s)", cfg.Timeout))
	}
	if cfg.Retries < -1 {
		errs = append(errs, fmt.Errorf("llm: retries %d: want ≥ 0, or −1 for none (0: the default 3)", cfg.Retries))
	}
	if cfg.MaxConcurrent < 0 || cfg.MaxResponseBytes < 0 {
		errs = append(errs, errors.New("llm: max concurrent requests and max response bytes must be ≥ 0 (0: the defaults 16 and 16 MiB)"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Endpoint{cfg: cfg, base: base, sem: make(chan struct{}, cfg.MaxConcurrent)}, nil
}

func (c EndpointConfig) withDefaults() EndpointConfig {
	if c.APIKey == "" {
		for _, name := range APIKeyEnv {
			if v := os.Getenv(name); v != "" {
				c.APIKey = v
				break
			}
		}
	}
	if c.Timeout == 0 {
		c.Timeout = 60 * time.Second
	}
	switch c.Retries {
	case 0:
		c.Retries = 3
	case -1:
		c.Retries = 0
	}
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = 16
	}
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = 16 << 20
	}
	if c.Client == nil {
		c.Client = &http.Client{}
	}
	return c
}

// URL is the endpoint's base URL.
func (e *Endpoint) URL() string { return e.base.String() }

// StatusError is a server's non-2xx answer.
type StatusError struct {
	// Path is the request's path below the base URL (e.g. /chat/completions).
	Path string
	// Code is the HTTP status code.
	Code int
	// Message is the server's error message (the OpenAI error object's
	// message when there is one, else the start of the body).
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("llm: %s answered %d: %s", e.Path, e.Code, e.Message)
}

// retryable reports whether an answer with this status may succeed later.
func retryable(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

// PostJSON posts req as JSON to path (below the base URL) and decodes the
// answer into resp. It retries connection errors and retryable statuses,
// waits for a free slot of MaxConcurrent, and returns a *StatusError for a
// final non-2xx answer, or ctx's error.
func (e *Endpoint) PostJSON(ctx context.Context, path string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("llm: encode request to %s: %w", path, err)
	}
	select {
	case e.sem <- struct{}{}:
		defer func() { <-e.sem }()
	case <-ctx.Done():
		return ctx.Err()
	}
	var last error
	for attempt := 0; attempt <= e.cfg.Retries; attempt++ {
		if attempt > 0 {
			if err := sleep(ctx, backoff(attempt)); err != nil {
				return err
			}
		}
		again, err := e.attempt(ctx, path, body, resp)
		if err == nil || !again {
			return err
		}
		last = err
	}
	return fmt.Errorf("%w (after %d attempts)", last, e.cfg.Retries+1)
}

// attempt makes one request; again says whether a retry may help.
func (e *Endpoint) attempt(ctx context.Context, path string, body []byte, resp any) (again bool, err error) {
	actx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	r, err := http.NewRequestWithContext(actx, http.MethodPost, e.base.String()+path, bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("llm: request to %s: %w", path, err)
	}
	r.Header.Set("Content-Type", "application/json")
	if e.cfg.APIKey != "" {
		r.Header.Set("Authorization", "Bearer "+e.cfg.APIKey)
	}
	res, err := e.cfg.Client.Do(r)
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return true, fmt.Errorf("llm: %s: %w", path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, e.cfg.MaxResponseBytes+1))
	if err != nil {
		return true, fmt.Errorf("llm: read answer of %s: %w", path, err)
	}
	if int64(len(b)) > e.cfg.MaxResponseBytes {
		return false, fmt.Errorf("llm: answer of %s is over %d bytes", path, e.cfg.MaxResponseBytes)
	}
	if res.StatusCode/100 != 2 {
		return retryable(res.StatusCode), &StatusError{Path: path, Code: res.StatusCode, Message: errorMessage(b)}
	}
	if err := json.Unmarshal(b, resp); err != nil {
		return false, fmt.Errorf("llm: answer of %s is not the expected JSON: %w", path, err)
	}
	return false, nil
}

// errorMessage extracts an OpenAI error object's message, else the start
// of the body.
func errorMessage(b []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func backoff(attempt int) time.Duration {
	d := 100 * time.Millisecond << min(attempt-1, 6)
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
