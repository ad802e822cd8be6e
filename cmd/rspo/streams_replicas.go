package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// writeReplicas writes each stream's replica health — its leader and how
// every follower keeps up — when the server is a JetStream cluster.
func writeReplicas(w io.Writer, found []jetstream.Stream) {
	header := false
	for _, st := range found {
		info := st.CachedInfo()
		ci := info.Cluster
		if ci == nil || ci.RaftGroup == "" && len(ci.Replicas) == 0 {
			continue // standalone server
		}
		if !header {
			fmt.Fprintln(w, "\nSTREAM\tREPLICAS\tLEADER\tFOLLOWERS")
			header = true
		}
		leader := ci.Leader
		if leader == "" {
			leader = "none (no quorum)"
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", info.Config.Name, info.Config.Replicas, leader, followers(ci.Replicas))
	}
}

// followers describes each follower: current, lagging (with how far
// behind and when last seen) or offline.
func followers(peers []*jetstream.PeerInfo) string {
	if len(peers) == 0 {
		return "-"
	}
	parts := make([]string, len(peers))
	for i, p := range peers {
		switch {
		case p.Offline:
			parts[i] = p.Name + " offline"
		case p.Current:
			parts[i] = p.Name + " current"
		default:
			parts[i] = fmt.Sprintf("%s lagging (%d behind, seen %v ago)", p.Name, p.Lag, p.Active.Round(time.Millisecond))
		}
	}
	return strings.Join(parts, ", ")
}
