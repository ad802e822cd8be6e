package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/streams"
)

// clusterFlags are the clustering flags of `rspo serve nats`.
type clusterFlags struct {
	name, serverName, host string
	port, replicas         int
	routes                 []string
	wait                   time.Duration
}

// register adds --cluster-name, --cluster-host, --cluster-port, --routes,
// --server-name, --replicas and --cluster-wait to fs.
func (c *clusterFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.name, "cluster-name", "", "join a JetStream cluster of this name (the same on every node; needs --server-name, --cluster-port, --routes)")
	fs.StringVar(&c.serverName, "server-name", "", "this node's name, unique in the cluster (default rspo when standalone)")
	fs.StringVar(&c.host, "cluster-host", "", "listen address for routes from the other nodes (default --host)")
	fs.IntVar(&c.port, "cluster-port", 0, "route port the other nodes connect to, e.g. 6222")
	fs.StringSliceVar(&c.routes, "routes", nil, "route URLs of the other nodes, comma-separated (nats://host:6222,...); listing this node too is harmless")
	fs.IntVar(&c.replicas, "replicas", 0, "copies of every stream and bucket, 1..5 (at most the cluster's size; 0 keeps existing ones as they are, new ones get 1)")
	fs.DurationVar(&c.wait, "cluster-wait", 2*time.Minute, "how long to wait for the cluster to form (a meta leader and --replicas nodes online; 0: 2m)")
}

// config validates the flags and returns the cluster configuration; every
// problem is named with the flag that fixes it.
func (c clusterFlags) config() (streams.ClusterConfig, error) {
	cc := streams.ClusterConfig{Name: c.name, Host: c.host, Port: c.port, Routes: c.routes}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !cc.Enabled() && c.host != "" {
		bad("--cluster-host needs --cluster-name")
	}
	if cc.Enabled() {
		if c.name == "" {
			bad("--cluster-port and --routes need --cluster-name (the same on every node)")
		}
		if c.serverName == "" {
			bad("--cluster-name needs --server-name, unique in the cluster (e.g. the machine's name)")
		}
		if c.port == 0 {
			bad("--cluster-name needs --cluster-port (e.g. 6222), where the other nodes' --routes point")
		}
		if len(c.routes) == 0 {
			bad("--cluster-name needs --routes to the other nodes (nats://host:6222,...)")
		}
	}
	if c.replicas < 0 || c.replicas > 5 {
		bad("--replicas %d not in 1..5 (0 keeps existing streams as they are)", c.replicas)
	}
	if !cc.Enabled() && c.replicas > 1 {
		bad("--replicas %d needs a cluster of at least %d nodes: give --cluster-name, --server-name, --cluster-port and --routes", c.replicas, c.replicas)
	}
	if c.wait < 0 {
		bad("--cluster-wait %v is negative", c.wait)
	}
	if len(errs) > 0 {
		return cc, errors.Join(errs...)
	}
	return cc, nil
}

// waitForCluster waits until a clustered node sees its meta leader and as
// many nodes online as --replicas asks, so that ensuring the streams does
// not fail on a cluster still forming.
func (c clusterFlags) waitForCluster(ctx context.Context, e *streams.Embedded, stderr io.Writer) error {
	if c.name == "" {
		return nil
	}
	fmt.Fprintf(stderr, "rspo: node %s of cluster %s: waiting for the cluster (a meta leader, %d nodes online)\n",
		c.serverName, c.name, max(c.replicas, 1))
	wctx, cancel := context.WithTimeout(ctx, cmp.Or(c.wait, 2*time.Minute))
	defer cancel()
	if err := e.WaitCluster(wctx, max(c.replicas, 1)); err != nil {
		return fmt.Errorf("%w (start the other nodes, check --routes and the route ports, or raise --cluster-wait)", err)
	}
	st, _ := e.ClusterState()
	fmt.Fprintf(stderr, "rspo: cluster %s formed: meta leader %s, %d nodes online\n", st.Name, st.Leader, st.Online)
	return nil
}

// ensureOnCluster ensures the topology, and on a cluster retries while the
// server says there are too few peers for the replicas, up to
// --cluster-wait: right after the cluster forms, the meta leader may still
// count a node that has just joined as offline ("no suitable peers for
// placement"), most often on a loaded machine.
func (c clusterFlags) ensureOnCluster(ctx context.Context, ensure func(context.Context) error) error {
	err := ensure(ctx)
	if c.name == "" {
		return err
	}
	deadline := time.Now().Add(cmp.Or(c.wait, 2*time.Minute))
	for errors.Is(err, streams.ErrReplicas) && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return err
		case <-time.After(500 * time.Millisecond):
		}
		err = ensure(ctx)
	}
	return err
}
