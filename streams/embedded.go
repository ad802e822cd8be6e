package streams

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// EmbeddedConfig configures an in-process NATS server with JetStream.
type EmbeddedConfig struct {
	// StoreDir is where JetStream keeps its files. Required.
	StoreDir string
	// Host is the listen address. Default "127.0.0.1" (loopback only).
	Host string
	// Port is the client port: 0 means 4222, -1 a random free port.
	Port int
	// User and Password, when set, are required from every client.
	User, Password string
	// TLSCert and TLSKey, when set, make the server speak TLS only.
	TLSCert, TLSKey string
	// SyncAlways fsyncs every write before acking it (slower, survives
	// power loss rather than only process crashes). Default false.
	SyncAlways bool
	// MaxPayload bounds one message. Default DefaultMaxPayload.
	MaxPayload int32
	// ServerName names the server in logs and monitoring. Default "rspo".
	ServerName string
	// ReadyTimeout bounds the wait for the server to accept clients.
	// Default 10s.
	ReadyTimeout time.Duration
	// Log sends the server's log to stderr. Default false (silent).
	Log bool
	// Cluster, when set, makes the server a node of a JetStream cluster
	// (ServerName is then required and must be unique in the cluster).
	Cluster ClusterConfig
}

// DefaultMaxPayload is the embedded server's message size limit when
// EmbeddedConfig.MaxPayload is 0: NATS's ceiling, which is also
// schemas.MaxBatchBytes, so every record the protocol allows fits.
const DefaultMaxPayload = 64 << 20

// Validate reports every problem with the configuration, joined.
func (c EmbeddedConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...)))
	}
	if c.StoreDir == "" {
		bad("embedded server needs a store directory")
	}
	if c.Port < -1 || c.Port > 65535 {
		bad("port %d not in -1..65535", c.Port)
	}
	if c.Password != "" && c.User == "" {
		bad("a password needs a user")
	}
	if c.User != "" && c.Password == "" {
		bad("user %q needs a password", c.User)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		bad("a TLS certificate and key go together (got cert %q, key %q)", c.TLSCert, c.TLSKey)
	}
	if c.MaxPayload < 0 {
		bad("max payload %d is negative", c.MaxPayload)
	}
	if c.ReadyTimeout < 0 {
		bad("ready timeout %v is negative", c.ReadyTimeout)
	}
	errs = append(errs, c.Cluster.validate(c.ServerName)...)
	return errors.Join(errs...)
}

func (c EmbeddedConfig) serverOptions() (*server.Options, error) {
	o := &server.Options{
		ServerName: c.ServerName,
		Host:       c.Host,
		Port:       c.Port,
		JetStream:  true,
		StoreDir:   c.StoreDir,
		SyncAlways: c.SyncAlways,
		MaxPayload: c.MaxPayload,
		Username:   c.User,
		Password:   c.Password,
		NoSigs:     true,
		NoLog:      !c.Log,
	}
	if o.ServerName == "" {
		o.ServerName = "rspo"
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.MaxPayload == 0 {
		o.MaxPayload = DefaultMaxPayload
	}
	if c.TLSCert != "" {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: c.TLSCert, KeyFile: c.TLSKey})
		if err != nil {
			return nil, fmt.Errorf("%w: embedded server TLS: %w", ErrInvalidConfig, err)
		}
		o.TLSConfig, o.TLS = tc, true
	}
	if err := c.Cluster.apply(o); err != nil {
		return nil, err
	}
	return o, nil
}

// Embedded is a running in-process NATS server with JetStream.
type Embedded struct {
	srv            *server.Server
	user, password string
}

// StartEmbedded starts a server and waits until it accepts clients. The
// caller stops it with Shutdown.
func StartEmbedded(c EmbeddedConfig) (*Embedded, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	opts, err := c.serverOptions()
	if err != nil {
		return nil, err
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("streams: embedded server: %w", err)
	}
	if c.Log {
		srv.ConfigureLogger()
	}
	go srv.Start()
	wait := c.ReadyTimeout
	if wait == 0 {
		wait = 10 * time.Second
	}
	if !srv.ReadyForConnections(wait) {
		srv.Shutdown()
		return nil, fmt.Errorf("streams: embedded server not ready after %v (is port %d free?)", wait, c.Port)
	}
	return &Embedded{srv: srv, user: c.User, password: c.Password}, nil
}

// ClientURL returns the URL clients connect to, e.g. nats://127.0.0.1:4222
// (tls://... when TLS is on).
func (e *Embedded) ClientURL() string { return e.srv.ClientURL() }

// Connect opens an in-process connection (no socket, no TLS) with the
// server's own credentials, for a program that embeds the server and its
// clients. The caller closes the connection.
func (e *Embedded) Connect(ctx context.Context, name string) (*nats.Conn, jetstream.JetStream, error) {
	opts := []nats.Option{nats.InProcessServer(e.srv), nats.Name(name)}
	if e.user != "" {
		opts = append(opts, nats.UserInfo(e.user, e.password))
	}
	nc, err := nats.Connect("", opts...)
	if err != nil {
		return nil, nil, connectError("in-process server", err)
	}
	js, err := jetstream.New(nc)
	if err == nil {
		_, err = js.AccountInfo(ctx)
	}
	if err != nil {
		nc.Close()
		return nil, nil, connectError("in-process server", err)
	}
	return nc, js, nil
}

// Server returns the underlying server, for tests and monitoring.
func (e *Embedded) Server() *server.Server { return e.srv }

// Shutdown stops the server and waits until it has stopped. JetStream data
// stays in StoreDir.
func (e *Embedded) Shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}
