package streams_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rspo-dev/rspo/streams"
)

func TestEmbeddedMonitoring(t *testing.T) {
	for _, tc := range []struct {
		name       string
		port       int
		host       string
		wantPrefix string // of MonitorURL; "" for none
		wantErr    bool
	}{
		{name: "off by default"},
		{name: "a free port on loopback", port: -1, wantPrefix: "http://127.0.0.1:"},
		{name: "a host without a port", host: "127.0.0.1", wantErr: true},
		{name: "a port out of range", port: 70000, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := streams.StartEmbedded(streams.EmbeddedConfig{StoreDir: t.TempDir(), Port: -1,
				MonitorPort: tc.port, MonitorHost: tc.host})
			if tc.wantErr {
				if !errors.Is(err, streams.ErrInvalidConfig) {
					t.Fatalf("got %v, want ErrInvalidConfig", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer e.Shutdown()
			got := e.MonitorURL()
			if tc.wantPrefix == "" && got != "" || tc.wantPrefix != "" && !strings.HasPrefix(got, tc.wantPrefix) {
				t.Errorf("MonitorURL %q, want prefix %q", got, tc.wantPrefix)
			}
		})
	}
}
