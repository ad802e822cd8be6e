package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rspo-dev/rspo/metrics"
	"github.com/rspo-dev/rspo/pipeline"
)

// metricsAddrFlag is the flag of `rspo run` and every `rspo serve STAGE`
// that serves Prometheus metrics.
const metricsAddrFlag = "metrics-addr"

// registerMetricsFlag adds --metrics-addr to fs.
func registerMetricsFlag(fs *pflag.FlagSet) {
	fs.String(metricsAddrFlag, "", "serve Prometheus metrics on http://HOST:PORT/metrics (default off; port 0 picks a free one)")
}

// startMetrics serves cfg's run's metrics on --metrics-addr, if given,
// and sets cfg.Metrics; the function returned stops serving. A bad address
// fails here, before the run starts.
func startMetrics(cmd *cobra.Command, cfg *pipeline.Config) (func(), error) {
	addr, err := cmd.Flags().GetString(metricsAddrFlag)
	if err != nil || addr == "" {
		return func() {}, nil // off, or a command without the flag
	}
	m := metrics.New(cfg.Learner.Run)
	srv, err := metrics.Listen(addr, m)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", metricsAddrFlag, err)
	}
	cfg.Metrics = m
	fmt.Fprintf(cmd.ErrOrStderr(), "rspo: metrics on %s\n", srv.URL())
	return func() { _ = srv.Close() }, nil
}
