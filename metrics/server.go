package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where Listen serves the metrics.
const Path = "/metrics"

// Server serves a Metrics on Path over HTTP.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan struct{}
}

// Listen listens on addr (HOST:PORT; port 0 picks a free one) and serves
// m on Path until Close. It fails at once if addr cannot be listened on.
func Listen(addr string, m *Metrics) (*Server, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("metrics: address %q: %w", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(Path, promhttp.HandlerFor(m.Gatherer(), promhttp.HandlerOpts{}))
	s := &Server{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln) // returns http.ErrServerClosed on Close
	}()
	return s, nil
}

// Addr is the address the server listens on (with the port picked).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the metrics' address, http://HOST:PORT/metrics.
func (s *Server) URL() string { return "http://" + s.Addr() + Path }

// Close stops the server, letting scrapes in progress finish for up to a
// few seconds.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.done
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
