package prmsvc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"

	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// Component names the PRM service in dead-letter subjects (rspo.<run>.dlq.prm).
const Component = "prm"

// ServiceName is the micro service name every PRM instance registers.
const ServiceName = "rspo-prm"

// Config configures a scoring service.
type Config struct {
	// Run scopes the subjects. Required.
	Run string
	// Model is the model served until a newer one is published. Required.
	Model *prm.Model
	// Reload follows rspo.<run>.ctrl.prm.published and swaps in every newer
	// version from the object store (JetStream must be given to New).
	// Default false.
	Reload bool
	// Noise is σ of Gaussian noise added to every step score (the paper's
	// robustness ablation). Default 0: none.
	Noise float64
	// NoiseSeed seeds the noise. Default 0.
	NoiseSeed uint64
	// QueueGroup lets several instances share the requests. Default
	// micro's "q".
	QueueGroup string
	// Logger receives reload events and failures. Default slog.Default().
	Logger *slog.Logger
	// OnScore, if set, is called after every scored request with how long
	// scoring took and how many trajectories it scored.
	OnScore func(d time.Duration, trajectories int)
}

// Validate reports every problem with the configuration.
func (c Config) Validate() error {
	var errs []error
	if err := streams.ValidateRun(c.Run); err != nil {
		errs = append(errs, err)
	}
	if c.Model == nil {
		errs = append(errs, fmt.Errorf("%w: no model", ErrInvalidConfig))
	}
	if c.Noise < 0 || c.Noise != c.Noise {
		errs = append(errs, fmt.Errorf("%w: noise σ %v must be ≥ 0", ErrInvalidConfig, c.Noise))
	}
	return errors.Join(errs...)
}

// Service scores trajectories for one run over NATS.
type Service struct {
	cfg   Config
	nc    *nats.Conn
	js    jetstream.JetStream
	model atomic.Pointer[prm.Model]
	log   *slog.Logger

	mu     sync.Mutex // guards rng
	rng    *rand.Rand
	svc    micro.Service
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// New builds a service; js is needed only with Config.Reload. Start it with
// Run (or Start and Stop).
func New(nc *nats.Conn, js jetstream.JetStream, cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Reload && js == nil {
		return nil, fmt.Errorf("%w: reloading needs JetStream", ErrInvalidConfig)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Service{cfg: cfg, nc: nc, js: js, log: cfg.Logger.With("component", "prm", "run", cfg.Run),
		rng: rand.New(rand.NewPCG(cfg.NoiseSeed, 0x6e6f697365))}
	s.model.Store(cfg.Model)
	return s, nil
}

// Model returns the model being served.
func (s *Service) Model() *prm.Model { return s.model.Load() }

// Swap replaces the served model.
func (s *Service) Swap(m *prm.Model) { s.model.Store(m) }

// Run serves until ctx ends, then stops (draining in-flight requests) and
// returns nil; it returns an error only if the service cannot start.
func (s *Service) Run(ctx context.Context) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	return s.Stop()
}

// Start registers the endpoint (and starts following prm.published with
// Reload); it returns once requests are being served.
func (s *Service) Start(ctx context.Context) error {
	svc, err := micro.AddService(s.nc, micro.Config{
		Name: ServiceName, Version: "1.0.0", QueueGroup: s.cfg.QueueGroup,
		Description: "rspo dense process reward model: per-step scores of trajectories",
		Metadata:    map[string]string{"run": s.cfg.Run},
	})
	if err != nil {
		return fmt.Errorf("prmsvc: add service: %w", err)
	}
	subject := streams.Subjects(s.cfg.Run).PRMScore
	if err := svc.AddEndpoint("score", micro.HandlerFunc(s.handle), micro.WithEndpointSubject(subject)); err != nil {
		svc.Stop()
		return fmt.Errorf("prmsvc: add endpoint %s: %w", subject, err)
	}
	s.svc = svc
	wctx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	if s.cfg.Reload {
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			s.follow(wctx)
		}()
	}
	s.log.Info("prm service started", "subject", subject, "prm_version", s.Model().Version)
	return nil
}

// Stop drains the endpoint and stops following events.
func (s *Service) Stop() error {
	if s.cancel != nil {
		s.cancel()
	}
	s.done.Wait()
	if s.svc == nil {
		return nil
	}
	if err := s.svc.Stop(); err != nil {
		return fmt.Errorf("prmsvc: stop: %w", err)
	}
	return nil
}

// ScoreReply is the JSON reply to a scoring request.
type ScoreReply struct {
	// PRMVersion is the version of the model that scored.
	PRMVersion int64 `json:"prm_version"`
	// Info is that model's training record; Info.ShapingEnabled gates
	// dense shaping on its held-out AUC.
	Info prm.ModelInfo `json:"info"`
	// Scores holds r̂_t per trajectory, per step.
	Scores [][]float64 `json:"scores"`
	// Totals holds R̂ = Σ_t r̂_t per trajectory.
	Totals []float64 `json:"totals"`
}

// handle answers one request; any failure becomes an error reply.
func (s *Service) handle(req micro.Request) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("prm scoring panicked", "panic", r)
			_ = req.Error(CodeServer, fmt.Sprintf("internal error: %v", r), nil)
		}
	}()
	trajs, err := schemas.DecodeTrajectoryBatch(req.Data())
	if err != nil {
		_ = req.Error(CodeBadRequest, err.Error(), nil)
		return
	}
	start := time.Now()
	reply, err := s.score(trajs)
	if err != nil {
		// A featurizer behind an inference server failed: a server error
		// the client sees, never scores made up of NaN.
		_ = req.Error(CodeServer, err.Error(), nil)
		return
	}
	if s.cfg.OnScore != nil {
		s.cfg.OnScore(time.Since(start), len(trajs))
	}
	if err := req.RespondJSON(reply); err != nil {
		s.log.Warn("prm reply failed", "err", err)
	}
}

// score scores trajs with the current model. Its featurizer's requests
// (a prm.BatchFeaturizer's) are bounded by their endpoint's timeouts, not
// by a context: a micro request carries none.
func (s *Service) score(trajs []*schemas.Trajectory) (ScoreReply, error) {
	m := s.Model()
	var opts []prm.ScoreOption
	if s.cfg.Noise > 0 {
		s.mu.Lock()
		defer s.mu.Unlock()
		opts = append(opts, prm.WithNoise(s.cfg.Noise, s.rng))
	}
	scores, err := m.ScoreBatchContext(context.Background(), trajs, opts...)
	if err != nil {
		return ScoreReply{}, err
	}
	reply := ScoreReply{PRMVersion: m.Version, Info: m.Info, Scores: scores, Totals: make([]float64, len(trajs))}
	for i, steps := range reply.Scores {
		for _, r := range steps {
			reply.Totals[i] += r
		}
		if reply.Scores[i] == nil {
			reply.Scores[i] = []float64{}
		}
	}
	return reply, nil
}
