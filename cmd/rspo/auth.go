package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/rspo-dev/rspo/streams/auth"
)

func init() { addCommand(newAuthCmd) }

func newAuthCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Least-privilege NATS credentials for the stages of rspo runs",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newAuthInitCmd())
	return cmd
}

func newAuthInitCmd() *cobra.Command {
	var runs []string
	var out string
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a NATS server configuration and one credentials file per stage of each run",
		Long: "Write DIR/nats.conf, a NATS server configuration with one account per run, and in it one\n" +
			"NKey user per stage (actor, explorer, swapper, buffer, learner, trainer, prm, policy) allowed only what that\n" +
			"stage needs, plus an admin user; and DIR/RUN/STAGE.creds, each readable by its owner only.\n" +
			"Serve it with `rspo serve nats --config DIR/nats.conf` and start each stage with\n" +
			"`rspo serve STAGE --run RUN --creds DIR/RUN/STAGE.creds`. docs/security.md lists the permissions.\n" +
			"Running it again replaces every key: restart the server and the stages.",
		Example: "  rspo auth init --run exp1 --run exp2 --out secrets/nats",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return authInit(runs, out, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringArrayVar(&runs, "run", nil, "run to create users for (repeat for several runs)")
	cmd.Flags().StringVar(&out, "out", "", "directory for the configuration and the credentials (required)")
	_ = cmd.MarkFlagRequired("run")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

func authInit(runs []string, dir string, stderr io.Writer) error {
	set, err := auth.Generate(runs)
	if err != nil {
		return err
	}
	if err := set.Write(dir); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "rspo: wrote %s and credentials for %d users of %d runs under %s\n",
		filepath.Join(dir, auth.ConfigFile), len(set.Users), len(runs), dir)
	fmt.Fprintf(stderr, "  serve:   rspo serve nats --data DATA --config %s\n", filepath.Join(dir, auth.ConfigFile))
	fmt.Fprintf(stderr, "  a stage: rspo serve actor --run %s --creds %s\n", runs[0], auth.CredsPath(dir, runs[0], auth.Actor))
	return nil
}
