package main

import (
	"context"
	"os"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/streams"
)

// defaultNATSURL is where commands look for a server unless --nats or
// NATS_URL says otherwise; `rspo serve nats` listens there by default.
const defaultNATSURL = "nats://127.0.0.1:4222"

// natsFlags are the connection flags shared by every command that talks to
// a NATS server. A command embeds one, calls register on its flag set, and
// connect in RunE:
//
//	var nf natsFlags
//	nf.register(cmd.Flags())
//	...
//	nc, js, err := nf.connect(ctx, "rspo-actor")
//	defer nc.Drain()
type natsFlags struct {
	url, user, password, creds string
	tlsCA, tlsCert, tlsKey     string
	replicas                   int // --replicas of the services (registerReplicas)
}

// register adds --nats, --user, --password, --creds, --tls-ca, --tls-cert
// and --tls-key to fs.
func (f *natsFlags) register(fs *pflag.FlagSet) {
	url := os.Getenv("NATS_URL")
	if url == "" {
		url = defaultNATSURL
	}
	fs.StringVar(&f.url, "nats", url, "NATS server URL(s), comma-separated; NATS_URL overrides the default")
	fs.StringVar(&f.user, "user", "", "NATS user name")
	fs.StringVar(&f.password, "password", "", "NATS password (better: NATS_PASSWORD or --password-file, which ps does not show)")
	fs.Var((*passwordFile)(&f.password), "password-file", "file whose first line is the NATS password")
	fs.StringVar(&f.creds, "creds", "", "NATS credentials file (JWT + NKey seed)")
	fs.StringVar(&f.tlsCA, "tls-ca", "", "PEM file of CAs to verify the server with")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "PEM client certificate (with --tls-key)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "PEM client key (with --tls-cert)")
}

// options returns the connection options; name identifies the client in the
// server's connection list.
func (f *natsFlags) options(name string) streams.ConnectOptions {
	pw := f.password
	if pw == "" {
		pw = os.Getenv("NATS_PASSWORD")
	}
	return streams.ConnectOptions{
		Name: name, User: f.user, Password: pw, CredsFile: f.creds,
		TLSCA: f.tlsCA, TLSCert: f.tlsCert, TLSKey: f.tlsKey,
	}
}

// passwordFile is a flag whose value is a file: setting it reads the
// password from the file's first line.
type passwordFile string

func (p *passwordFile) Set(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	*p = passwordFile(strings.TrimRight(line, "\r"))
	return nil
}

func (p *passwordFile) String() string { return "" } // never show the password
func (p *passwordFile) Type() string   { return "file" }

// connect dials the server and checks JetStream. It does not create the
// topology; services call streams.Ensure themselves.
func (f *natsFlags) connect(ctx context.Context, name string) (*nats.Conn, jetstream.JetStream, error) {
	return streams.Connect(ctx, f.url, f.options(name))
}
