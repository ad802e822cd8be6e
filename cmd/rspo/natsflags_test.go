package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/streams"
)

// runRspo runs the rspo command line with args and returns what it wrote
// to stdout and stderr.
func runRspo(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err = root.ExecuteContext(ctx)
	return out.String(), errb.String(), err
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestNATSFlagsOptions(t *testing.T) {
	t.Setenv("NATS_URL", "nats://example:4333")
	t.Setenv("NATS_PASSWORD", "from-env")
	tests := []struct {
		name string
		args []string
		url  string
		want streams.ConnectOptions
	}{
		{"defaults from the environment", nil, "nats://example:4333",
			streams.ConnectOptions{Name: "t", Password: "from-env"}},
		{"flags win", []string{"--nats", "nats://h:1", "--user", "u", "--password", "p"}, "nats://h:1",
			streams.ConnectOptions{Name: "t", User: "u", Password: "p"}},
		{"tls and creds", []string{"--creds", "c", "--tls-ca", "ca", "--tls-cert", "crt", "--tls-key", "k"}, "nats://example:4333",
			streams.ConnectOptions{Name: "t", Password: "from-env", CredsFile: "c", TLSCA: "ca", TLSCert: "crt", TLSKey: "k"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f natsFlags
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			f.register(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if f.url != tt.url {
				t.Errorf("got url %q, want %q", f.url, tt.url)
			}
			if got := f.options("t"); got != tt.want {
				t.Errorf("got options %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestNATSFlagsDefaultURL(t *testing.T) {
	t.Setenv("NATS_URL", "")
	var f natsFlags
	f.register(pflag.NewFlagSet("x", pflag.ContinueOnError))
	if f.url != defaultNATSURL {
		t.Fatalf("got %q, want %q", f.url, defaultNATSURL)
	}
}

func TestNATSFlagsConnectErrors(t *testing.T) {
	t.Setenv("NATS_PASSWORD", "")
	f := natsFlags{url: "nats://127.0.0.1:1", tlsCert: "only-cert.pem"}
	_, _, err := f.connect(context.Background(), "t")
	if !errors.Is(err, streams.ErrInvalidConfig) || !strings.Contains(err.Error(), "go together") {
		t.Fatalf("got %v, want an error saying cert and key go together", err)
	}
}
