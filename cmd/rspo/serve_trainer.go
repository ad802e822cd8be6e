package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/learner/trainersvc"
	"github.com/rspo-dev/rspo/pipeline"
)

func init() { addServeCommand(newServeTrainerCmd) }

func newServeTrainerCmd() *cobra.Command {
	var nf natsFlags
	var cfg trainersvc.Config
	cmd := &cobra.Command{
		Use:   "trainer",
		Short: "Apply the learner's training batches: the reference external trainer",
		Long: "For a learner started with --trainer external: consume rspo.<run>.batch, apply each batch to\n" +
			"the built-in policy at the version it names (loaded with its trainer state from the object\n" +
			"store when it is not the one in hand), store version v+1 with its trainer state beside it and\n" +
			"announce it with policy.published (model <run>-v<v+1>). It trains exactly as the built-in\n" +
			"trainer does. A batch whose version is already stored is announced again, not retrained;\n" +
			"bad batches go to rspo.<run>.dlq.trainer with the reason. The batch protocol is in\n" +
			"docs/protocol.md (\"External trainers\"), for trainers of your own.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.AckWait <= 0 {
				return fmt.Errorf("--ack-wait %v: give a positive duration", cfg.AckWait)
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			return serveStage(cmd, nf, pipeline.StageTrainer, pipeline.Config{
				Learner: learnersvc.Config{Run: cfg.Run}, Trainer: cfg})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Run, "run", "", "run name (required)")
	fs.StringVar(&cfg.Name, "name", "trainer", "trainer name in its policy.published events")
	fs.StringVar(&cfg.Durable, "durable", "", "consumer name (default trainer-<run>)")
	fs.DurationVar(&cfg.AckWait, "ack-wait", 5*time.Minute, "a killed trainer's batch is redelivered after this long (heartbeats every third of it)")
	nf.register(fs)
	nf.registerReplicas(fs)
	registerMetricsFlag(fs)
	_ = cmd.MarkFlagRequired("run")
	return cmd
}
