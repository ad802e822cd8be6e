package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/streams"
)

func init() { addServeCommand(newServeNATSCmd) }

// serveNATSFlags are the flags of `rspo serve nats`.
type serveNATSFlags struct {
	data, host, user, password, tlsCert, tlsKey string
	port, monitorPort                           int
	monitorHost                                 string
	syncAlways, log                             bool
	maxAge                                      time.Duration
	maxBytes                                    int64
	auth                                        serveNATSAuth
	cluster                                     clusterFlags
}

func newServeNATSCmd() *cobra.Command {
	var f serveNATSFlags
	cmd := &cobra.Command{
		Use:   "nats",
		Short: "Run an embedded NATS server with JetStream and the rspo streams",
		Long: "Run a NATS server with JetStream in this process until interrupted, storing its data under --data,\n" +
			"and create (or update) the rspo streams and buckets. Services connect with --nats.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serveNATS(cmd.Context(), f, cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.data, "data", "", "directory for JetStream data (required); the --data of rspo run serves that run's store, DIR/nats")
	fs.StringVar(&f.host, "host", "127.0.0.1", "listen address (0.0.0.0 for every interface)")
	fs.IntVar(&f.port, "port", 4222, "client port (-1 picks a free one)")
	fs.StringVar(&f.user, "user", "", "require this user name from clients (with --password)")
	fs.StringVar(&f.password, "password", "", "require this password from clients")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "PEM server certificate: serve TLS only (with --tls-key)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "PEM server key (with --tls-cert)")
	fs.IntVar(&f.monitorPort, "monitor-port", 0, "serve the server's HTTP monitoring (/varz, /jsz, …) on this port (default 0: off; -1 picks a free one)")
	fs.StringVar(&f.monitorHost, "monitor-host", "", "monitoring listen address (default 127.0.0.1; needs --monitor-port)")
	fs.BoolVar(&f.syncAlways, "sync-always", false, "fsync every write before acknowledging it")
	fs.BoolVar(&f.log, "log", false, "print the server's log to stderr")
	fs.DurationVar(&f.maxAge, "max-age", 0, "drop stream messages older than this (0 keeps them)")
	fs.Int64Var(&f.maxBytes, "max-bytes", 0, "bound each stream to this many bytes, dropping the oldest (0: unbounded)")
	f.auth.register(fs)
	f.cluster.register(fs)
	_ = cmd.MarkFlagRequired("data")
	return cmd
}

// serveNATS starts the server, ensures the topology, and waits for ctx.
func serveNATS(ctx context.Context, f serveNATSFlags, stderr io.Writer) error {
	opts := streams.Options{MaxAge: f.maxAge, MaxBytes: f.maxBytes, Replicas: f.cluster.replicas}
	cluster, err := f.cluster.config()
	if err != nil {
		return err
	}
	if err := opts.Validate(); err != nil {
		return err
	}
	if dir, err := storeDir(f.data); err == nil && dir != f.data { // rspo run's --data: its store is DIR/nats
		fmt.Fprintf(stderr, "rspo: %s holds the store of rspo run --data %s: serving it\n", dir, f.data)
		f.data = dir
	}
	e, err := streams.StartEmbedded(streams.EmbeddedConfig{
		StoreDir: f.data, Host: f.host, Port: f.port, User: f.user, Password: f.password,
		TLSCert: f.tlsCert, TLSKey: f.tlsKey, SyncAlways: f.syncAlways, Log: f.log,
		ConfigFile: f.auth.config, TLSCA: f.auth.tlsCA,
		ServerName: f.cluster.serverName, Cluster: cluster,
		MonitorPort: f.monitorPort, MonitorHost: f.monitorHost,
	})
	if err != nil {
		return err
	}
	defer e.Shutdown()
	if err := f.cluster.waitForCluster(ctx, e, stderr); err != nil {
		return err
	}
	if err := f.cluster.ensureOnCluster(ctx, func(ctx context.Context) error { return ensureTopology(ctx, e, opts) }); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "rspo: NATS with JetStream listening on %s, data in %s; streams ready. Ctrl-C stops.\n",
		e.ClientURL(), f.data)
	if u := e.MonitorURL(); u != "" {
		fmt.Fprintf(stderr, "rspo: NATS monitoring on %s (/varz, /jsz, /connz)\n", u)
	}
	<-ctx.Done()
	fmt.Fprintln(stderr, "rspo: NATS server stopped")
	return nil
}
