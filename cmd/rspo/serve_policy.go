package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/llm"
	"github.com/rspo-dev/rspo/llm/llmserve"
	"github.com/rspo-dev/rspo/prm"
	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

func init() { addServeCommand(newServePolicyCmd) }

// servePolicyFlags are the flags of `rspo serve policy`.
type servePolicyFlags struct {
	run, addr, alias, embedModel string
	keep, embedDim               int
	// apiKey is the key clients must send; from --api-key-file, else
	// policyAPIKeyEnv; "" serves without one.
	apiKey string
	// apiKeyProblem says why the key given is unusable (an empty file
	// or variable), for validate.
	apiKeyProblem string
}

// policyAPIKeyEnv names the variable `rspo serve policy` reads its API
// key from when --api-key-file is not given.
const policyAPIKeyEnv = "RSPO_POLICY_API_KEY"

// defaultPolicyAddr is where `rspo serve policy` listens unless --addr
// says otherwise: this machine only.
const defaultPolicyAddr = "127.0.0.1:8000"

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
			"built-in policy plays in-process (docs/llm.md).\n\n" +
			"It listens on 127.0.0.1 only unless --addr names another interface. With an API key (--api-key-file,\n" +
			"or " + policyAPIKeyEnv + ") every request must carry \"Authorization: Bearer KEY\"; clients such as\n" +
			"rspo serve actor send RSPO_OPENAI_API_KEY. An announcement that is not the run's own (another run's\n" +
			"snapshot, an impossible version) is dead-lettered on rspo.<run>.dlq.policy and not served.",
		Example: "  rspo serve policy --nats nats://127.0.0.1:4222 --run exp1\n" +
			"  rspo serve actor --nats nats://127.0.0.1:4222 --run exp1 --policy openai --endpoint http://127.0.0.1:8000/v1\n" +
			"  " + policyAPIKeyEnv + "=$(cat key) rspo serve policy --run exp1 --addr 0.0.0.0:8000 --creds secrets/nats/exp1/policy.creds",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.parsed(cmd.Flags()); err != nil {
				return err
			}
			return servePolicies(cmd, nf, f)
		},
	}
	f.register(cmd.Flags())
	nf.register(cmd.Flags())
	_ = cmd.MarkFlagRequired("run")
	return cmd
}

// register adds the server's flags to fs.
func (f *servePolicyFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.run, "run", "", "run whose policy versions to serve (required)")
	fs.StringVar(&f.addr, "addr", defaultPolicyAddr, "HTTP listen address host:port; the default serves this machine only, 0.0.0.0:8000 (or :8000) every interface; port 0: any free port, printed at start")
	fs.Var((*passwordFile)(&f.apiKey), "api-key-file", "file whose first line is the API key every request must carry as \"Authorization: Bearer KEY\" (default: "+policyAPIKeyEnv+"; neither: no key)")
	fs.IntVar(&f.keep, "keep", 4, "how many of the last announced versions stay loaded")
	fs.StringVar(&f.alias, "model", "", "also serve the newest version under this name")
	fs.StringVar(&f.embedModel, "embed-model", "rspo-hash-embedding", "name of the embedding model served on POST /v1/embeddings: a deterministic hashed-text embedding (the PRM's hash projection of the whole text), for trying the embeddings featurizer without a GPU; none: no embeddings")
	fs.IntVar(&f.embedDim, "embed-dim", 256, "length of the served embeddings")
}

// parsed completes the flags once fs is parsed: the API key from
// policyAPIKeyEnv when --api-key-file was not given. It returns every
// problem with them, joined.
func (f *servePolicyFlags) parsed(fs *pflag.FlagSet) error {
	f.readAPIKey(fs.Changed("api-key-file"))
	return f.validate()
}

// readAPIKey takes the key from policyAPIKeyEnv when --api-key-file was
// not given, and notes a file or variable that holds an empty key.
func (f *servePolicyFlags) readAPIKey(fromFile bool) {
	if fromFile {
		if f.apiKey == "" {
			f.apiKeyProblem = "--api-key-file: the file's first line is empty; write the key there"
		}
		return
	}
	if key, ok := os.LookupEnv(policyAPIKeyEnv); ok {
		f.apiKey = key
		if key == "" {
			f.apiKeyProblem = policyAPIKeyEnv + " is set but empty: set the key, or unset it to serve without one"
		}
	}
}

func (f servePolicyFlags) validate() error {
	var errs []error
	if f.apiKeyProblem != "" {
		errs = append(errs, errors.New(f.apiKeyProblem))
	}
	if _, _, err := net.SplitHostPort(f.addr); err != nil {
		errs = append(errs, fmt.Errorf("--addr %q: want host:port, e.g. %s: %w", f.addr, defaultPolicyAddr, err))
	}
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
	handler, access := http.Handler(srv), "none"
	if f.apiKey != "" {
		if handler, err = llmserve.RequireAPIKey(f.apiKey, srv); err != nil {
			return err
		}
		access = "api-key"
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	log.Info("policy server listening", "run", f.run, "url", "http://"+ln.Addr().String()+"/v1", "auth", access)
	if f.apiKey == "" && !loopback(ln.Addr()) {
		log.Warn("policy server reachable beyond this machine without an API key: anyone who reaches it can use the policies; set "+policyAPIKeyEnv+" or --api-key-file", "addr", ln.Addr().String())
	}

	lib := &policyLibrary{srv: srv, js: js, run: f.run, keep: f.keep, alias: f.alias, log: log, newest: -1}
	followErr := make(chan error, 1)
	fctx, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	go func() { followErr <- lib.follow(fctx) }()

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

// loopback reports whether a listener's address is reachable from this
// machine only.
func loopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
