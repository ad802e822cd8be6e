package streams

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ConnectOptions says how to reach and authenticate to a NATS server. The
// zero value connects anonymously without TLS.
type ConnectOptions struct {
	// Name is the client name the server shows in its connection list.
	// Default "rspo".
	Name string
	// User and Password authenticate with a user name and password.
	User, Password string
	// CredsFile is a NATS credentials file: a JWT and NKey seed, or an NKey
	// seed alone (what `rspo auth init` writes); exclusive with
	// User/Password.
	CredsFile string
	// TLSCA is a PEM file of CAs to verify the server with (default: the
	// system roots when the URL is tls://).
	TLSCA string
	// TLSCert and TLSKey are a PEM client certificate and key, for servers
	// that verify clients. Both or neither.
	TLSCert, TLSKey string
	// Timeout bounds the dial. Default 5s, or less when ctx has an earlier
	// deadline.
	Timeout time.Duration
}

// Validate reports every problem with the options, joined.
func (o ConnectOptions) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...)))
	}
	if o.Password != "" && o.User == "" {
		bad("a password needs a user")
	}
	if o.CredsFile != "" && o.User != "" {
		bad("use either a credentials file or a user and password, not both")
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		bad("a TLS client certificate and key go together (got cert %q, key %q)", o.TLSCert, o.TLSKey)
	}
	for _, f := range []struct{ what, path string }{
		{"credentials file", o.CredsFile}, {"TLS CA file", o.TLSCA},
		{"TLS certificate", o.TLSCert}, {"TLS key", o.TLSKey},
	} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			bad("%s: %v", f.what, err)
		}
	}
	if o.Timeout < 0 {
		bad("timeout %v is negative", o.Timeout)
	}
	return errors.Join(errs...)
}

// DefaultConnectTimeout bounds the dial when ConnectOptions.Timeout is 0.
const DefaultConnectTimeout = 5 * time.Second

func (o ConnectOptions) natsOptions(ctx context.Context) []nats.Option {
	name, timeout := o.Name, o.Timeout
	if name == "" {
		name = "rspo"
	}
	if timeout == 0 {
		timeout = DefaultConnectTimeout
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) < timeout {
		timeout = max(time.Until(d), time.Millisecond)
	}
	opts := []nats.Option{nats.Name(name), nats.Timeout(timeout)}
	if o.User != "" {
		opts = append(opts, nats.UserInfo(o.User, o.Password))
	}
	if o.CredsFile != "" {
		opts = append(opts, credsOption(o.CredsFile))
	}
	if o.TLSCA != "" {
		opts = append(opts, nats.RootCAs(o.TLSCA))
	}
	if o.TLSCert != "" {
		opts = append(opts, nats.ClientCert(o.TLSCert, o.TLSKey))
	}
	return opts
}

// credsOption authenticates with a credentials file: with its JWT when it
// holds one, else with its NKey seed alone (a server that lists NKey users
// in its configuration rather than trusting an operator).
func credsOption(path string) nats.Option {
	b, err := os.ReadFile(path)
	if err == nil && !bytes.Contains(b, []byte("BEGIN NATS USER JWT")) {
		if opt, err := nats.NkeyOptionFromSeed(path); err == nil {
			return opt
		}
	}
	return nats.UserCredentials(path)
}

// Connect dials the server(s) at serverURL (comma-separated for a cluster),
// checks that JetStream is enabled for the account, and returns the
// connection and its JetStream context. The caller closes the connection
// (Drain or Close). Errors are *ConnectError (matching ErrConnect) with a
// hint when the cause is recognised, or ErrInvalidConfig for bad options.
func Connect(ctx context.Context, serverURL string, o ConnectOptions) (*nats.Conn, jetstream.JetStream, error) {
	if err := o.Validate(); err != nil {
		return nil, nil, err
	}
	nc, err := nats.Connect(serverURL, o.natsOptions(ctx)...)
	if err != nil {
		return nil, nil, connectError(serverURL, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, connectError(serverURL, err)
	}
	if _, err := js.AccountInfo(ctx); err != nil {
		nc.Close()
		return nil, nil, connectError(serverURL, err)
	}
	return nc, js, nil
}

func connectError(serverURL string, err error) error {
	return &ConnectError{URL: redactURLs(serverURL), Hint: connectHint(err), Err: err}
}

func connectHint(err error) string {
	var unknownCA x509.UnknownAuthorityError
	switch {
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired),
		errors.Is(err, nats.ErrAuthRevoked), strings.Contains(strings.ToLower(err.Error()), "authorization"):
		return "check the user and password or the credentials file"
	case errors.Is(err, nats.ErrNoServers):
		return "is a NATS server with JetStream running there? `rspo serve nats` starts one"
	case errors.As(err, &unknownCA), strings.Contains(err.Error(), "x509"), strings.Contains(err.Error(), "tls:"):
		return "check the TLS CA, certificate and key, and that the URL scheme is tls://"
	case errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount):
		return "enable JetStream on the server (nats-server -js) or for this account"
	}
	return ""
}

// redactURLs hides passwords in a comma-separated list of URLs.
func redactURLs(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			parts[i] = u.Redacted()
		}
	}
	return strings.Join(parts, ",")
}
