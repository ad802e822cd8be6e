package main

import (
	"fmt"
	"time"

	"github.com/rspo-dev/rspo/learner/learnersvc"
	"github.com/rspo-dev/rspo/pipeline"
	"github.com/rspo-dev/rspo/swapper/swappersvc"
	"github.com/spf13/cobra"
)

func init() { addServeCommand(newServeSwapperCmd) }

// serveSwapperFlags are the flags of `rspo serve swapper`.
type serveSwapperFlags struct {
	nats           natsFlags
	run, durable   string
	workers, batch int
	ackWait        time.Duration
	verify         bool
	envOpts        map[string]string
}

func newServeSwapperCmd() *cobra.Command {
	var f serveSwapperFlags
	cmd := &cobra.Command{
		Use:   "swapper",
		Short: "Relabel explorer trajectories with the outcome reward into buffer records",
		Long: "Consume rspo.<run>.traj.explore, replace each trajectory's dense reward labels with the\n" +
			"outcome reward, compute its priority keys, and publish the record to rspo.<run>.swapped.\n" +
			"Invalid trajectories (and, with --verify, those whose replay disproves their outcome) go to\n" +
			"the dead-letter queue. Run several swappers with the same --durable to share the work.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.config()
			if err != nil {
				return err
			}
			return serveStage(cmd, f.nats, pipeline.StageSwapper, pipeline.Config{
				Learner: learnersvc.Config{Run: f.run}, Swapper: cfg})
		},
	}
	f.nats.register(cmd.Flags())
	f.nats.registerReplicas(cmd.Flags())
	registerMetricsFlag(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVar(&f.run, "run", "", "run name (required)")
	fs.StringVar(&f.durable, "durable", "", "consumer name shared by cooperating swappers (default swapper-<run>)")
	fs.IntVar(&f.workers, "workers", 2, "concurrent fetch loops")
	fs.IntVar(&f.batch, "batch", 64, "trajectories per fetch")
	fs.DurationVar(&f.ackWait, "ack-wait", 30*time.Second, "redeliver a trajectory whose swapper died after this long")
	fs.BoolVar(&f.verify, "verify", false, "replay every trajectory in its environment and reject disproved outcomes (a cycle whose plan asks for it is verified anyway)")
	envOptsVar(fs, &f.envOpts, "environment option KEY=VALUE for --verify of trajectories without a cycle plan on the bus (repeatable, or comma-separated); planned cycles use the plan's")
	_ = cmd.MarkFlagRequired("run")
	return cmd
}

// config turns the flags into a swapper configuration.
func (f serveSwapperFlags) config() (swappersvc.Config, error) {
	if len(f.envOpts) > 0 && !f.verify {
		return swappersvc.Config{}, fmt.Errorf("--env-opt is only used with --verify")
	}
	cfg := swappersvc.Config{Run: f.run, Durable: f.durable, Workers: f.workers, Batch: f.batch,
		AckWait: f.ackWait, Verify: f.verify, EnvOptions: f.envOpts}
	if f.workers < 1 || f.batch < 1 {
		return cfg, fmt.Errorf("--workers %d and --batch %d must be at least 1", f.workers, f.batch)
	}
	return cfg, cfg.Validate()
}
