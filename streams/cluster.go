package streams

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// ClusterConfig makes an embedded server one node of a JetStream cluster.
// The zero value runs a standalone server.
type ClusterConfig struct {
	// Name is the cluster's name, the same on every node. Setting it turns
	// clustering on.
	Name string
	// Host is the address the node listens on for routes from the other
	// nodes. Default: EmbeddedConfig.Host.
	Host string
	// Port is the route port: -1 picks a free one. Required.
	Port int
	// Routes are the other nodes' route URLs (nats://host:port); listing
	// this node's own URL too is harmless, so every node can be given the
	// same list. Required: JetStream needs them to form its meta group.
	Routes []string
}

// Enabled reports whether the configuration asks for a cluster.
func (c ClusterConfig) Enabled() bool {
	return c.Name != "" || c.Port != 0 || len(c.Routes) > 0
}

// validate reports every problem with the cluster settings; serverName is
// the node's EmbeddedConfig.ServerName.
func (c ClusterConfig) validate(serverName string) []error {
	if !c.Enabled() {
		return nil
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: cluster: %s", ErrInvalidConfig, fmt.Sprintf(format, args...)))
	}
	if c.Name == "" {
		bad("a route port or routes need a cluster name, the same on every node")
	} else if strings.ContainsAny(c.Name, " \t\r\n") {
		bad("cluster name %q contains whitespace", c.Name)
	}
	if serverName == "" {
		bad("every node needs a server name of its own (unique in the cluster)")
	}
	if c.Port == 0 || c.Port < -1 || c.Port > 65535 {
		bad("route port %d not in 1..65535 (or -1 for a free one)", c.Port)
	}
	if len(c.Routes) == 0 {
		bad("JetStream needs routes to the other nodes (nats://host:port of their route ports)")
	}
	for _, r := range c.Routes {
		if _, err := routeURL(r); err != nil {
			bad("%v", err)
		}
	}
	return errs
}

// routeURL parses one route, nats://host:port.
func routeURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("route %q: %w", s, err)
	}
	if u.Scheme != "nats" && u.Scheme != "nats-route" {
		return nil, fmt.Errorf("route %q: want nats://host:port", s)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil || host == "" {
		return nil, fmt.Errorf("route %q: want nats://host:port", s)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return nil, fmt.Errorf("route %q: port %q not in 1..65535", s, port)
	}
	return u, nil
}

// apply sets the cluster options of o, whose Host is already defaulted.
func (c ClusterConfig) apply(o *server.Options) error {
	if !c.Enabled() {
		return nil
	}
	routes := make([]*url.URL, len(c.Routes))
	for i, r := range c.Routes {
		u, err := routeURL(r)
		if err != nil {
			return fmt.Errorf("%w: cluster: %w", ErrInvalidConfig, err)
		}
		routes[i] = u
	}
	o.Cluster = server.ClusterOpts{Name: c.Name, Host: c.Host, Port: c.Port}
	if o.Cluster.Host == "" {
		o.Cluster.Host = o.Host
	}
	o.Routes = routes
	return nil
}

// ClusterState is what a node knows of its JetStream cluster.
type ClusterState struct {
	// Name is the cluster's name; Leader the meta leader's server name
	// ("" while none is elected).
	Name, Leader string
	// Online counts the JetStream nodes this node sees online, itself
	// included; Size is the meta group's size (online or not).
	Online, Size int
	// Current says this node is up to date with the meta leader.
	Current bool
}

// ClusterState reports the node's view of its cluster; ok is false for a
// standalone server.
func (e *Embedded) ClusterState() (ClusterState, bool) {
	if !e.srv.JetStreamIsClustered() {
		return ClusterState{}, false
	}
	jsz, err := e.srv.Jsz(nil)
	if err != nil || jsz.Meta == nil {
		return ClusterState{}, true
	}
	st := ClusterState{Name: jsz.Meta.Name, Leader: jsz.Meta.Leader, Size: jsz.Meta.Size,
		Online: 1, Current: e.srv.JetStreamIsCurrent()}
	for _, p := range jsz.Meta.Replicas {
		if !p.Offline {
			st.Online++
		}
	}
	return st, true
}

// WaitCluster waits until the node's cluster has a meta leader, this node
// is current with it, and at least nodes JetStream nodes are online: the
// point from which streams of that many replicas can be created. A
// standalone server is ready at once when nodes <= 1.
func (e *Embedded) WaitCluster(ctx context.Context, nodes int) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		st, clustered := e.ClusterState()
		switch {
		case !clustered && nodes > 1:
			return fmt.Errorf("%w: %d replicas need a JetStream cluster, this server is standalone", ErrReplicas, nodes)
		case !clustered, st.Leader != "" && st.Current && st.Online >= nodes:
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("streams: cluster %s: %d of the %d JetStream nodes online, meta leader %q: %w",
				st.Name, st.Online, nodes, st.Leader, ctx.Err())
		case <-tick.C:
		}
	}
}

// ErrReplicas means the server cannot hold as many replicas as asked: it
// is standalone, or its cluster has fewer JetStream nodes online.
var ErrReplicas = errors.New("streams: not enough JetStream servers for the replicas")

// JetStream API error codes that mean there are not enough servers.
const (
	codeNoPeers              jetstream.ErrorCode = 10005
	codeInsufficientResource jetstream.ErrorCode = 10023
	codeReplicasNotSupported jetstream.ErrorCode = 10074
)

// replicasError explains an error the server gave for n replicas when it
// means there are too few servers, and returns other errors unchanged.
func replicasError(err error, n int) error {
	var apiErr *jetstream.APIError
	if err == nil || !errors.As(err, &apiErr) {
		return err
	}
	switch apiErr.ErrorCode {
	case codeNoPeers, codeInsufficientResource, codeReplicasNotSupported:
		return fmt.Errorf("%w: %d replicas need a JetStream cluster of at least %d servers online "+
			"(lower --replicas, or start the missing nodes): %w", ErrReplicas, n, n, err)
	}
	return err
}
