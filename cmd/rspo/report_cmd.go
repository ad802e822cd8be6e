package main

import (
	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/pipeline"
)

func init() { addCommand(newReportCmd) }

func newReportCmd() *cobra.Command {
	var src sourceFlags
	var run, out string
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Write a recorded run's report again from its streams",
		Long: "Rebuild the report directory of a run (summary.json, the metrics tables, plots, report.html,\n" +
			"TensorBoard events, config.yaml and the final policy) from what the run recorded on the\n" +
			"server, into OUT/<run>/report. With --data it reads a store directly.",
		Example: "  rspo report --data runs --run household-gigpo-rspo-prm-tilt-s1",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			js, closeFn, err := src.open(cmd.Context(), "rspo-report")
			if err != nil {
				return err
			}
			defer closeFn()
			sum, err := pipeline.Report(cmd.Context(), js, run, out)
			if err != nil {
				return err
			}
			return printSummary(cmd.OutOrStdout(), sum)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&run, "run", "", "run name (required)")
	fs.StringVar(&out, "out", "runs", "directory the report is written under (OUT/<run>/report)")
	src.register(fs)
	_ = cmd.MarkFlagRequired("run")
	return cmd
}
