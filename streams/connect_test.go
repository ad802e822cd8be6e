package streams_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/rspo-dev/rspo/streams"
)

func startAuthServer(t *testing.T) *streams.Embedded {
	t.Helper()
	e, err := streams.StartEmbedded(streams.EmbeddedConfig{
		StoreDir: t.TempDir(), Port: -1, User: "alice", Password: "s3cret",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	return e
}

func TestConnectAuth(t *testing.T) {
	e := startAuthServer(t)
	tests := []struct {
		name     string
		opts     streams.ConnectOptions
		wantErr  error
		wantHint string
	}{
		{"right credentials", streams.ConnectOptions{User: "alice", Password: "s3cret"}, nil, ""},
		{"wrong password", streams.ConnectOptions{User: "alice", Password: "guess"}, nats.ErrAuthorization, "check the user and password"},
		{"no credentials", streams.ConnectOptions{}, nats.ErrAuthorization, "check the user and password"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			nc, _, err := streams.Connect(ctx, e.ClientURL(), tt.opts)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("got %v, want a connection", err)
				}
				nc.Close()
				return
			}
			if !errors.Is(err, tt.wantErr) || !errors.Is(err, streams.ErrConnect) {
				t.Fatalf("got %v, want an ErrConnect wrapping %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantHint) {
				t.Errorf("got %q, want the hint %q", err, tt.wantHint)
			}
		})
	}
}

func TestConnectNoServer(t *testing.T) {
	e, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	url := e.ClientURL()
	e.Shutdown() // the port is now closed
	_, _, err = streams.Connect(context.Background(), url, streams.ConnectOptions{Timeout: time.Second})
	if !errors.Is(err, nats.ErrNoServers) {
		t.Fatalf("got %v, want ErrNoServers", err)
	}
	if !strings.Contains(err.Error(), "rspo serve nats") {
		t.Errorf("got %q, want a hint to start a server", err)
	}
}

func TestConnectOptionErrors(t *testing.T) {
	tests := []struct {
		name string
		opts streams.ConnectOptions
		want string
	}{
		{"password without user", streams.ConnectOptions{Password: "p"}, "needs a user"},
		{"creds and user", streams.ConnectOptions{User: "u", CredsFile: "x.creds"}, "not both"},
		{"cert without key", streams.ConnectOptions{TLSCert: "c.pem"}, "go together"},
		{"missing CA file", streams.ConnectOptions{TLSCA: "no-such-ca.pem"}, "TLS CA file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := streams.Connect(context.Background(), "nats://127.0.0.1:1", tt.opts)
			if !errors.Is(err, streams.ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want ErrInvalidConfig mentioning %q", err, tt.want)
			}
		})
	}
}

func TestConnectRedactsPassword(t *testing.T) {
	_, _, err := streams.Connect(context.Background(), "nats://bob:hunter2@127.0.0.1:1", streams.ConnectOptions{Timeout: 200 * time.Millisecond})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("got %v, want an error without the password", err)
	}
}

func TestEmbeddedConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  streams.EmbeddedConfig
		want string
	}{
		{"no store", streams.EmbeddedConfig{}, "store directory"},
		{"bad port", streams.EmbeddedConfig{StoreDir: "d", Port: 70000}, "port"},
		{"user without password", streams.EmbeddedConfig{StoreDir: "d", User: "u"}, "needs a password"},
		{"key without cert", streams.EmbeddedConfig{StoreDir: "d", TLSKey: "k"}, "go together"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := streams.StartEmbedded(tt.cfg)
			if !errors.Is(err, streams.ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want ErrInvalidConfig mentioning %q", err, tt.want)
			}
		})
	}
}

// A server that does not come up in time is reported with the causes that
// apply: store recovery always, the port only when it is a fixed one (not
// "port -1" for a random port).
func TestEmbeddedNotReadySaysWhy(t *testing.T) {
	for _, tc := range []struct {
		port     int
		wantPort string
	}{{-1, ""}, {0, "port 4222"}} {
		dir := t.TempDir()
		e, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: dir, Port: tc.port, ReadyTimeout: time.Nanosecond})
		if err == nil {
			e.Shutdown()
			t.Skip("the server came up within a nanosecond")
		}
		msg := err.Error()
		if !strings.Contains(msg, dir) || strings.Contains(msg, "-1") {
			t.Errorf("port %d: %q should name the store and no port -1", tc.port, msg)
		}
		if tc.wantPort != "" && !strings.Contains(msg, tc.wantPort) {
			t.Errorf("port %d: %q should name %s", tc.port, msg, tc.wantPort)
		}
		if tc.wantPort == "" && strings.Contains(msg, "port") {
			t.Errorf("random port: %q should not blame a port", msg)
		}
	}
}

// Two servers on one store would corrupt each other's streams: the second
// is refused with ErrStoreInUse, in this process and in another one, and
// the store is free again after Shutdown.
func TestEmbeddedStoreIsLocked(t *testing.T) {
	dir := t.TempDir()
	first, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: dir, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: dir, Port: -1})
	if !errors.Is(err, streams.ErrStoreInUse) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second server in this process: %v, want ErrStoreInUse naming %s", err, dir)
	}
	out, err := lockChild(dir)
	if err == nil || !strings.Contains(out, "in use") {
		t.Fatalf("server in another process: exit %v, output %q; want it refused", err, out)
	}
	first.Shutdown()
	again, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: dir, Port: -1})
	if err != nil {
		t.Fatalf("after Shutdown the store must be free: %v", err)
	}
	again.Shutdown()
}

// lockChild runs this test binary as a process that starts a server on dir.
func lockChild(dir string) (string, error) {
	cmd := exec.Command(os.Args[0], "-test.run", "^TestEmbeddedStoreIsLockedChild$")
	cmd.Env = append(os.Environ(), "RSPO_TEST_LOCK_DIR="+dir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestEmbeddedStoreIsLockedChild is the other process of
// TestEmbeddedStoreIsLocked; it does nothing unless run by it.
func TestEmbeddedStoreIsLockedChild(t *testing.T) {
	dir := os.Getenv("RSPO_TEST_LOCK_DIR")
	if dir == "" {
		t.Skip("run by TestEmbeddedStoreIsLocked")
	}
	e, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: dir, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.Shutdown()
}
