package main

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/streams"
)

// serveNATSAuth are the flags of `rspo serve nats` that restrict who may
// connect: a server configuration of accounts and users (`rspo auth
// init`), and client certificate verification.
type serveNATSAuth struct {
	config, tlsCA string
}

func (a *serveNATSAuth) register(fs *pflag.FlagSet) {
	fs.StringVar(&a.config, "config", "", "NATS server configuration (accounts, users, permissions: rspo auth init writes one); "+
		"--data, --host, --port and the TLS flags override it")
	fs.StringVar(&a.tlsCA, "tls-ca", "", "PEM CAs: require client certificates they signed (mutual TLS, with --tls-cert/--tls-key)")
}

// ensureTopology creates the rspo streams and buckets: in every account of
// the configuration file when there is one (each run has its own), else in
// the server's only account.
func ensureTopology(ctx context.Context, e *streams.Embedded, opts streams.Options) error {
	accounts := e.Accounts()
	if len(accounts) == 0 {
		return ensureIn(ctx, e, "", opts)
	}
	for _, acc := range accounts {
		if err := ensureIn(ctx, e, acc, opts); err != nil {
			return err
		}
	}
	return nil
}

func ensureIn(ctx context.Context, e *streams.Embedded, account string, opts streams.Options) error {
	connect := e.Connect
	if account != "" {
		connect = func(ctx context.Context, name string) (*nats.Conn, jetstream.JetStream, error) {
			return e.ConnectAccount(ctx, account, name)
		}
	}
	nc, js, err := connect(ctx, "rspo-serve-nats")
	if account != "" && errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
		return nil // an account of the operator's own, without JetStream
	}
	if err != nil {
		return err
	}
	defer nc.Close()
	return streams.Ensure(ctx, js, opts)
}
