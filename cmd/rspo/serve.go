package main

import "github.com/spf13/cobra"

// serveBuilders collects `rspo serve STAGE` subcommands; each stage's file
// registers its own with addServeCommand.
var serveBuilders []func() *cobra.Command

// addServeCommand registers a `rspo serve` subcommand builder.
func addServeCommand(build func() *cobra.Command) { serveBuilders = append(serveBuilders, build) }

func init() {
	addCommand(func() *cobra.Command {
		serve := &cobra.Command{
			Use:   "serve STAGE",
			Short: "Run one stage of the pipeline as a long-lived service",
			Long: "Run one stage of the pipeline against a NATS server (or the embedded one with `serve nats`).\n" +
				"Start as many actors and explorers as you like; they share work through the RSPO_WORK stream.",
		}
		for _, build := range serveBuilders {
			serve.AddCommand(build())
		}
		return serve
	})
}
