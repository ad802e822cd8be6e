package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/buffersvc"
	"github.com/rspo-dev/rspo/streams"
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
			return serveBuffer(cmd.Context(), f, cmd.ErrOrStderr())
		},
	}
	f.nats.register(cmd.Flags())
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

// serveBuffer runs the buffer service until ctx ends.
func serveBuffer(ctx context.Context, f serveBufferFlags, stderr io.Writer) (err error) {
	opts, cfg, err := f.config()
	if err != nil {
		return err
	}
	nc, js, err := f.nats.connect(ctx, "rspo-buffer-"+f.run)
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := streams.Ensure(ctx, js, streams.Options{}); err != nil {
		return err
	}
	store, err := buffersvc.Open(f.data, opts)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, store.Close()) }()
	svc, err := buffersvc.NewService(nc, js, store, cfg)
	if err != nil {
		return err
	}
	sub := streams.Subjects(f.run)
	fmt.Fprintf(stderr, "rspo: buffer for run %s in %s: consuming %s, serving %s and %s\n",
		f.run, f.data, sub.Swapped, sub.BufferSample, sub.BufferStats)
	err = svc.Run(ctx)
	c := svc.Counters()
	fmt.Fprintf(stderr, "rspo: buffer stopped: %d stored, %d replaced, %d dropped, %d dead-lettered in %d batches\n",
		c.Stored, c.Replaced, c.Dropped, c.DeadLettered, c.Batches)
	return err
}
