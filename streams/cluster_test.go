package streams_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/streams/streamstest"
)

func TestClusterConfigValidate(t *testing.T) {
	routes := []string{"nats://10.0.0.2:6222", "nats://10.0.0.3:6222"}
	tests := []struct {
		name    string
		server  string
		cluster streams.ClusterConfig
		want    string // "" for valid
	}{
		{"standalone", "", streams.ClusterConfig{}, ""},
		{"node", "a", streams.ClusterConfig{Name: "c", Port: 6222, Routes: routes}, ""},
		{"free route port", "a", streams.ClusterConfig{Name: "c", Port: -1, Routes: routes}, ""},
		{"no name", "a", streams.ClusterConfig{Port: 6222, Routes: routes}, "need a cluster name"},
		{"name with space", "a", streams.ClusterConfig{Name: "my c", Port: 6222, Routes: routes}, "whitespace"},
		{"no server name", "", streams.ClusterConfig{Name: "c", Port: 6222, Routes: routes}, "server name"},
		{"no port", "a", streams.ClusterConfig{Name: "c", Routes: routes}, "route port 0"},
		{"port too big", "a", streams.ClusterConfig{Name: "c", Port: 70000, Routes: routes}, "route port 70000"},
		{"no routes", "a", streams.ClusterConfig{Name: "c", Port: 6222}, "needs routes"},
		{"route without port", "a", streams.ClusterConfig{Name: "c", Port: 6222, Routes: []string{"nats://10.0.0.2"}}, "want nats://host:port"},
		{"route of http", "a", streams.ClusterConfig{Name: "c", Port: 6222, Routes: []string{"http://10.0.0.2:6222"}}, "want nats://host:port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := streams.EmbeddedConfig{StoreDir: "x", ServerName: tt.server, Cluster: tt.cluster}.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			case tt.want != "" && !errors.Is(err, streams.ErrInvalidConfig):
				t.Fatalf("error %v does not match ErrInvalidConfig", err)
			}
		})
	}
}

func TestStandaloneRefusesReplicas(t *testing.T) {
	s := streamstest.RunServer(t)
	_, js := streamstest.Connect(t, s)
	err := streams.Ensure(context.Background(), js, streams.Options{Replicas: 3})
	if !errors.Is(err, streams.ErrReplicas) {
		t.Fatalf("Ensure with 3 replicas on a standalone server: %v, want ErrReplicas", err)
	}
}

// replicas returns every stream's and bucket's replica count.
func replicas(t *testing.T, js jetstream.JetStream) map[string]int {
	t.Helper()
	ctx := context.Background()
	got := map[string]int{}
	names := []string{"OBJ_" + streams.BucketPolicy, "OBJ_" + streams.BucketPRM, "KV_" + streams.BucketState}
	for _, spec := range streams.Topology() {
		names = append(names, spec.Name)
	}
	for _, n := range names {
		st, err := js.Stream(ctx, n)
		if err != nil {
			t.Fatalf("stream %s: %v", n, err)
		}
		got[n] = st.CachedInfo().Config.Replicas
	}
	return got
}

func TestEnsureReplicasOnCluster(t *testing.T) {
	c := streamstest.RunCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nc, js, err := streams.Connect(ctx, c.URL(), streams.ConnectOptions{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	steps := []struct {
		name     string
		replicas int
		want     int
	}{
		{"new streams get one replica by default", 0, 1},
		{"an explicit count scales them up", 3, 3},
		{"zero leaves them as they are", 0, 3},
		{"and down again", 2, 2},
	}
	for _, s := range steps {
		if err := streams.Ensure(ctx, js, streams.Options{Replicas: s.replicas}); err != nil {
			t.Fatalf("%s: Ensure(replicas %d): %v", s.name, s.replicas, err)
		}
		for n, r := range replicas(t, js) {
			if r != s.want {
				t.Errorf("%s: %s has %d replicas, want %d", s.name, n, r, s.want)
			}
		}
	}
	err = streams.Ensure(ctx, js, streams.Options{Replicas: 5})
	if !errors.Is(err, streams.ErrReplicas) {
		t.Fatalf("Ensure with 5 replicas on 3 nodes: %v, want ErrReplicas", err)
	}
	t.Log(err)
}
