package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rspo-dev/rspo/streams"
)

func TestClusterFlags(t *testing.T) {
	node := clusterFlags{name: "c", serverName: "a", port: 6222, routes: []string{"nats://b:6222", "nats://c:6222"}}
	tests := []struct {
		name string
		edit func(*clusterFlags)
		want string // "" for valid
	}{
		{"standalone", func(c *clusterFlags) { *c = clusterFlags{} }, ""},
		{"standalone, one replica", func(c *clusterFlags) { *c = clusterFlags{replicas: 1} }, ""},
		{"node", func(*clusterFlags) {}, ""},
		{"node, three replicas", func(c *clusterFlags) { c.replicas = 3 }, ""},
		{"standalone, three replicas", func(c *clusterFlags) { *c = clusterFlags{replicas: 3} }, "--replicas 3 needs a cluster"},
		{"six replicas", func(c *clusterFlags) { c.replicas = 6 }, "--replicas 6 not in 1..5"},
		{"no cluster name", func(c *clusterFlags) { c.name = "" }, "need --cluster-name"},
		{"no server name", func(c *clusterFlags) { c.serverName = "" }, "needs --server-name"},
		{"no cluster port", func(c *clusterFlags) { c.port = 0 }, "needs --cluster-port"},
		{"no routes", func(c *clusterFlags) { c.routes = nil }, "needs --routes"},
		{"cluster host alone", func(c *clusterFlags) { *c = clusterFlags{host: "0.0.0.0"} }, "--cluster-host needs --cluster-name"},
		{"negative wait", func(c *clusterFlags) { c.wait = -time.Second }, "--cluster-wait -1s is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := node
			tt.edit(&c)
			_, err := c.config()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestServeNATSRefusesBadClusterFlags(t *testing.T) {
	_, _, err := runRspo(testContext(t), "serve", "nats", "--data", t.TempDir(), "--port", "-1",
		"--cluster-name", "c", "--cluster-port", "6222")
	if err == nil || !strings.Contains(err.Error(), "--server-name") || !strings.Contains(err.Error(), "--routes") {
		t.Fatalf("got %v, want an error naming --server-name and --routes", err)
	}
}

func TestFollowers(t *testing.T) {
	tests := []struct {
		peers []*jetstream.PeerInfo
		want  string
	}{
		{nil, "-"},
		{[]*jetstream.PeerInfo{{Name: "b", Current: true}, {Name: "c", Offline: true}}, "b current, c offline"},
		{[]*jetstream.PeerInfo{{Name: "b", Lag: 12, Active: 1500 * time.Millisecond}}, "b lagging (12 behind, seen 1.5s ago)"},
	}
	for _, tt := range tests {
		if got := followers(tt.peers); got != tt.want {
			t.Errorf("followers(%v) = %q, want %q", tt.peers, got, tt.want)
		}
	}
}

// loopbackPorts reserves n distinct free loopback ports and releases them.
func loopbackPorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

func TestServeNATSClusterWithReplicas(t *testing.T) {
	ports := loopbackPorts(t, 6)
	var routes, urls []string
	for i := range 3 {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[3+i]))
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 3)
	logs := make([]*syncBuffer, 3)
	for i := range 3 {
		logs[i] = &syncBuffer{}
		f := serveNATSFlags{data: t.TempDir(), host: "127.0.0.1", port: ports[i], cluster: clusterFlags{
			name: "rspo-test", serverName: fmt.Sprintf("n%d", i), port: ports[3+i], routes: routes, replicas: 3}}
		go func() { errc <- serveNATS(ctx, f, logs[i]) }()
	}
	stopAll := func() {
		cancel()
		for range 3 {
			if err := <-errc; err != nil {
				t.Errorf("serve nats: %v", err)
			}
		}
	}
	defer func() {
		if ctx.Err() == nil {
			stopAll()
		}
	}()
	for i := range 3 {
		for deadline := time.Now().Add(time.Minute); !listeningRE.MatchString(logs[i].String()); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("node n%d not ready; logs:\n%s\n%s\n%s", i, logs[0], logs[1], logs[2])
			}
		}
	}
	if !strings.Contains(logs[0].String(), "3 nodes online") {
		t.Errorf("node n0 did not report the cluster formed:\n%s", logs[0].String())
	}
	out, _, err := runRspo(testContext(t), "streams", "--nats", strings.Join(urls, ","))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`(?m)^STREAM\s+REPLICAS\s+LEADER\s+FOLLOWERS$`,
		`(?m)^RSPO_TRAJ\s+3\s+n\d\s+n\d current, n\d current$`,
		`(?m)^RSPO_DLQ\s+3\s+n\d\s+n\d current, n\d current$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("output does not match %s:\n%s", want, out)
		}
	}
	stopAll()
}

// A node that finds too few peers right after its cluster formed tries
// again until --cluster-wait; a standalone server and other errors fail at
// once.
func TestEnsureOnClusterRetriesMissingPeers(t *testing.T) {
	tooFew := fmt.Errorf("%w: peer offline", streams.ErrReplicas)
	failing := func(n int, err error) (func(context.Context) error, *int) {
		calls := 0
		return func(context.Context) error {
			calls++
			if calls <= n {
				return err
			}
			return nil
		}, &calls
	}
	ctx := context.Background()
	cluster := clusterFlags{name: "c", wait: 10 * time.Second}
	ensure, calls := failing(2, tooFew)
	if err := cluster.ensureOnCluster(ctx, ensure); err != nil || *calls != 3 {
		t.Errorf("cluster, two misses: %v after %d calls, want nil after 3", err, *calls)
	}
	ensure, calls = failing(1, tooFew)
	if err := (clusterFlags{}).ensureOnCluster(ctx, ensure); !errors.Is(err, streams.ErrReplicas) || *calls != 1 {
		t.Errorf("standalone: %v after %d calls, want the error at once", err, *calls)
	}
	other := errors.New("permission denied")
	ensure, calls = failing(1, other)
	if err := cluster.ensureOnCluster(ctx, ensure); !errors.Is(err, other) || *calls != 1 {
		t.Errorf("another error: %v after %d calls, want it at once", err, *calls)
	}
	ensure, _ = failing(1000, tooFew)
	start := time.Now()
	if err := (clusterFlags{name: "c", wait: time.Second}).ensureOnCluster(ctx, ensure); !errors.Is(err, streams.ErrReplicas) {
		t.Errorf("peers never come: %v, want ErrReplicas", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("retried for %v, want about --cluster-wait (1s)", time.Since(start))
	}
}
