package streamstest

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rspo-dev/rspo/streams"
)

// Cluster is a JetStream cluster of embedded servers on loopback, each
// with its store in its own t.TempDir(). Nodes can be stopped and
// restarted on the same ports and store, as a crashed machine comes back.
type Cluster struct {
	t     testing.TB
	cfgs  []streams.EmbeddedConfig
	nodes []*streams.Embedded
}

// RunCluster starts an n-node cluster named "rspo-test" (nodes n0, n1, …,
// every node routed to every other), waits until its JetStream meta group
// has a leader with every node online, and shuts it down when the test ends.
func RunCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	ports := freePorts(t, 2*n)
	routes := make([]string, n)
	for i := range n {
		routes[i] = fmt.Sprintf("nats://127.0.0.1:%d", ports[n+i])
	}
	c := &Cluster{t: t, nodes: make([]*streams.Embedded, n)}
	for i := range n {
		c.cfgs = append(c.cfgs, streams.EmbeddedConfig{
			StoreDir: t.TempDir(), Port: ports[i], ServerName: fmt.Sprintf("n%d", i),
			Cluster: streams.ClusterConfig{Name: "rspo-test", Port: ports[n+i], Routes: routes},
		})
	}
	t.Cleanup(func() {
		for i := range c.nodes {
			c.Stop(i)
		}
	})
	for i := range n {
		if err := c.Start(i); err != nil {
			t.Fatal(err)
		}
	}
	c.Wait(n)
	return c
}

// freePorts reserves n distinct free loopback ports and releases them.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("streamstest: free port: %v", err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// URL is every node's client URL, comma-separated, as clients that must
// ride out a node's loss are given it.
func (c *Cluster) URL() string {
	urls := make([]string, len(c.cfgs))
	for i, cfg := range c.cfgs {
		urls[i] = fmt.Sprintf("nats://127.0.0.1:%d", cfg.Port)
	}
	return strings.Join(urls, ",")
}

// Len is the number of nodes.
func (c *Cluster) Len() int { return len(c.cfgs) }

// Index returns the index of the node with the given server name, or -1.
func (c *Cluster) Index(name string) int {
	for i, cfg := range c.cfgs {
		if cfg.ServerName == name {
			return i
		}
	}
	return -1
}

// Node returns node i, nil while it is stopped.
func (c *Cluster) Node(i int) *streams.Embedded { return c.nodes[i] }

// Start starts node i (again) on its ports and store. It does not call
// t.Fatal, so a test may restart a node from another goroutine.
func (c *Cluster) Start(i int) error {
	e, err := streams.StartEmbedded(c.cfgs[i])
	if err != nil {
		return fmt.Errorf("streamstest: start node %s: %w", c.cfgs[i].ServerName, err)
	}
	c.nodes[i] = e
	return nil
}

// Stop shuts node i down, as a crash would; its store stays.
func (c *Cluster) Stop(i int) {
	if c.nodes[i] != nil {
		c.nodes[i].Shutdown()
		c.nodes[i] = nil
	}
}

// Wait waits (up to 30 s) until every running node sees a meta leader and
// at least online nodes.
func (c *Cluster) Wait(online int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, e := range c.nodes {
		if e == nil {
			continue
		}
		if err := e.WaitCluster(ctx, online); err != nil {
			c.t.Fatalf("streamstest: %v", err)
		}
	}
}
