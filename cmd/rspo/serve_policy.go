package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/llm/llmserve"
	"github.com/rspo-dev/rspo/policy"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/producers"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

func init() { addServeCommand(newServePolicyCmd) }

// servePolicyFlags are the flags of `rspo serve policy`.
type servePolicyFlags struct {
	run, addr, alias, embedModel string
	keep, embedDim               int
}

func newServePolicyCmd() *cobra.Command {
	var (
		nf natsFlags
		f  servePolicyFlags
	)
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Serve a run's built-in policy versions over the OpenAI chat-completions API",
		Long: "Follow rspo.<run>.ctrl.policy.published, load every announced policy snapshot from the object store\n" +
			"and serve it on POST /v1/chat/completions (and GET /v1/models) under the event's model name, or\n" +
			"<run>-v<version> when the event names none, keeping the newest --keep versions loaded. Actors\n" +
			"started with --policy openai --endpoint http://ADDR/v1 then play through it exactly as the\n" +
			"built-in policy plays in-process (docs/llm.md).",
		Example: "  rspo serve policy --nats nats://127.0.0.1:4222 --run exp1 --addr :8000\n" +
			"  rspo serve actor --nats nats://127.0.0.1:4222 --run exp1 --policy openai --endpoint http://127.0.0.1:8000/v1",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(); err != nil {
				return err
			}
			return servePolicies(cmd, nf, f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.run, "run", "", "run whose policy versions to serve (required)")
	fs.StringVar(&f.addr, "addr", ":8000", "HTTP listen address (port 0: any free port, printed at start)")
	fs.IntVar(&f.keep, "keep", 4, "how many of the last announced versions stay loaded")
	fs.StringVar(&f.alias, "model", "", "also serve the newest version under this name")
	fs.StringVar(&f.embedModel, "embed-model", "rspo-hash-embedding", "name of the embedding model served on POST /v1/embeddings: a deterministic hashed-text embedding (the PRM's hash projection of the whole text), for trying the embeddings featurizer without a GPU; none: no embeddings")
	fs.IntVar(&f.embedDim, "embed-dim", 256, "length of the served embeddings")
	nf.register(fs)
	_ = cmd.MarkFlagRequired("run")
	return cmd
}

func (f servePolicyFlags) validate() error {
	var errs []error
	if err := streams.ValidateRun(f.run); err != nil {
		errs = append(errs, fmt.Errorf("--run: %w", err))
	}
	if f.keep < 1 {
		errs = append(errs, fmt.Errorf("--keep %d: keep at least 1 version loaded", f.keep))
	}
	if f.embedModel == "" {
		errs = append(errs, errors.New("--embed-model is empty: name the embedding model, or give none to serve no embeddings"))
	}
	if f.embedModel != "none" && (f.embedDim < 1 || f.embedDim > prm.MaxFeatureDim) {
		errs = append(errs, fmt.Errorf("--embed-dim %d: want 1..%d", f.embedDim, prm.MaxFeatureDim))
	}
	if len(f.alias) > schemas.MaxModelName {
		errs = append(errs, fmt.Errorf("--model: %d bytes, at most %d", len(f.alias), schemas.MaxModelName))
	}
	return errors.Join(errs...)
}

// servePolicies runs the HTTP server and the follower until the command's
// context ends, then shuts the server down gracefully.
func servePolicies(cmd *cobra.Command, nf natsFlags, f servePolicyFlags) error {
	ctx := cmd.Context()
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
	nc, js, err := nf.connect(ctx, "rspo-policy-"+f.run)
	if err != nil {
		return err
	}
	defer nc.Close()
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", f.addr, err)
	}
	srv := llmserve.New()
	if f.embedModel != "none" {
		embed, err := llm.HashEmbedding(prm.HashProjectionConfig{Dim: f.embedDim})
		if err != nil {
			return fmt.Errorf("--embed-dim: %w", err)
		}
		h, err := llm.NewEmbedHandler(llm.EmbedHandlerConfig{Model: f.embedModel, Embed: embed})
		if err != nil {
			return err
		}
		srv.ServeEmbeddings(h)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	log.Info("policy server listening", "run", f.run, "url", "http://"+ln.Addr().String()+"/v1")

	lib := &policyLibrary{srv: srv, js: js, keep: f.keep, alias: f.alias, log: log, newest: -1}
	followErr := make(chan error, 1)
	fctx, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	go func() { followErr <- producers.FollowPolicies(fctx, js, f.run, log, lib.add(fctx)) }()

	select {
	case <-ctx.Done():
	case err = <-served:
		return fmt.Errorf("policy server: %w", err)
	case err = <-followErr:
		if err != nil {
			_ = hs.Close()
			return err
		}
	}
	stopFollow()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("policy server shutdown: %w", err)
	}
	log.Info("policy server stopped", "run", f.run, "answered", fmt.Sprint(srv.Answered()))
	return nil
}

// policyLibrary loads announced versions into the server, keeping the
// newest few. It is used from the follower's goroutine only.
type policyLibrary struct {
	srv    *llmserve.Server
	js     jetstream.JetStream
	keep   int
	alias  string
	log    *slog.Logger
	loaded []string // model names, oldest first
	newest int64
}

func (l *policyLibrary) add(ctx context.Context) func(schemas.Event) {
	return func(e schemas.Event) {
		name := e.Model
		if name == "" {
			name = schemas.DefaultModelName(e.Run, e.PolicyVersion)
		}
		b, err := streams.GetSnapshot(ctx, l.js, streams.BucketPolicy, e.Object)
		if err == nil {
			var p *policy.Policy
			if p, err = policy.Load(b); err == nil {
				l.serve(name, e.PolicyVersion, p)
				return
			}
		}
		if ctx.Err() == nil { // an old version's snapshot may be gone (the learner keeps the newest few)
			l.log.Warn("announced policy not loaded", "version", e.PolicyVersion, "object", e.Object, "err", err)
		}
	}
}

func (l *policyLibrary) serve(name string, v int64, p *policy.Policy) {
	l.srv.Serve(name, p)
	l.loaded = append(slices.DeleteFunc(l.loaded, func(n string) bool { return n == name }), name)
	for len(l.loaded) > l.keep {
		l.srv.Remove(l.loaded[0])
		l.loaded = l.loaded[1:]
	}
	if v > l.newest {
		l.newest = v
		if l.alias != "" {
			l.srv.Serve(l.alias, p)
		}
	}
	l.log.Info("policy served", "model", name, "version", v)
}
