// Command rspo trains multi-turn agents with RSPO (Reward-Swap Policy
// Optimization) as an event-sourced pipeline over NATS JetStream.
//
// One binary carries every role: `rspo run` trains end to end in one
// process, `rspo serve STAGE` runs one stage as a service, and the remaining
// commands inspect, replay and evaluate. Each command lives in its own file
// and registers itself with addCommand; main stays thin.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// commandBuilders collects the top-level subcommands; each file adds its own
// from an init function so commands can be added without editing this file.
var commandBuilders []func() *cobra.Command

// addCommand registers a top-level subcommand builder.
func addCommand(build func() *cobra.Command) { commandBuilders = append(commandBuilders, build) }

func newRootCmd() *cobra.Command {
	var memLimit string
	root := &cobra.Command{
		Use:           "rspo",
		Short:         "Train multi-turn agents with Reward-Swap Policy Optimization over NATS JetStream",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return applyMemoryLimit(memLimit)
		},
	}
	memoryLimitFlag(root.PersistentFlags(), &memLimit)
	for _, build := range commandBuilders {
		root.AddCommand(build())
	}
	return root
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "rspo:", err)
		if errors.Is(err, context.Canceled) {
			os.Exit(130)
		}
		os.Exit(1)
	}
}
