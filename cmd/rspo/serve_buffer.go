package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/pipeline"
)

func init() { addServeCommand(newServeBufferCmd) }

// serveBufferFlags are the flags of `rspo serve buffer`.
type serveBufferFlags struct {
	nats                        natsFlags
	run, durable, data          string
	batch, keepCycles, maxSamps int
	ackWait                     time.Duration
}

func newServeBufferCmd() *cobra.Command {
	var f serveBufferFlags
	cmd := &cobra.Command{
		Use:   "buffer",
		Short: "Run the replay buffer: materialise swapped records in Pebble and serve prioritized samples",
		Long: "Consume rspo.<run>.swapped into a Pebble store under --data (acking after each synced batch),\n" +
			"clear ended cycles on cycle.ended, and answer rspo.<run>.buffer.sample and\n" +
			"rspo.<run>.buffer.stats. The store can be rebuilt from the stream with `rspo buffer rebuild`.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, cfg, err := f.config()
			if err != nil {
				return err
			}
			return serveStage(cmd, f.nats, pipeline.StageBuffer, pipeline.Config{
				Learner: learnersvc.Config{Run: f.run}, Buffer: pipeline.BufferConfig{Dir: f.data, Store: opts, Service: cfg}})
		},
	}
	f.nats.register(cmd.Flags())
	f.nats.registerReplicas(cmd.Flags())
	registerMetricsFlag(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVar(&f.run, "run", "", "run name (required)")
	fs.StringVar(&f.data, "data", "", "directory of the Pebble store (required)")
	fs.StringVar(&f.durable, "durable", "", "consumer name (default buffer-<run>; each buffer of a run needs its own)")
	fs.IntVar(&f.batch, "batch", 256, "records per fetch and per synced commit")
	fs.IntVar(&f.keepCycles, "keep-cycles", 0, "on cycle.ended(c) keep cycles above c-K (0: the paper's clear-every-cycle)")
	fs.IntVar(&f.maxSamps, "max-samples", 0, "how often one record may be sampled (0: no cap)")
	fs.DurationVar(&f.ackWait, "ack-wait", 30*time.Second, "redeliver a record whose buffer died after this long")
	_ = cmd.MarkFlagRequired("run")
	_ = cmd.MarkFlagRequired("data")
	return cmd
}

// config turns the flags into the store options and service configuration.
func (f serveBufferFlags) config() (buffersvc.Options, buffersvc.Config, error) {
	opts := buffersvc.Options{MaxSamplesPerRecord: f.maxSamps}
	cfg := buffersvc.Config{Run: f.run, Durable: f.durable, Batch: f.batch, KeepCycles: f.keepCycles, AckWait: f.ackWait}
	var errs []error
	if f.batch < 1 {
		errs = append(errs, fmt.Errorf("--batch %d must be at least 1", f.batch))
	}
	if f.ackWait <= 0 {
		errs = append(errs, fmt.Errorf("--ack-wait %v must be positive", f.ackWait))
	}
	errs = append(errs, opts.Validate(), cfg.Validate())
	return opts, cfg, errors.Join(errs...)
}
