package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func init() { addCommand(newVersionCmd) }

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the module version, the VCS revision it was built from and the Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi, ok := debug.ReadBuildInfo()
			if !ok {
				return fmt.Errorf("version: the binary carries no build information")
			}
			return writeVersion(cmd.OutOrStdout(), bi)
		},
	}
}

// writeVersion writes the module path and version, the VCS settings the
// go command recorded (revision, time, modified) and the Go version.
func writeVersion(w io.Writer, bi *debug.BuildInfo) error {
	version := bi.Main.Version
	if version == "" {
		version = "(unknown)"
	}
	fmt.Fprintf(w, "rspo %s %s\n", bi.Main.Path, version)
	vcs := map[string]string{}
	for _, s := range bi.Settings {
		vcs[s.Key] = s.Value
	}
	if rev, ok := vcs["vcs.revision"]; ok {
		modified := ""
		if vcs["vcs.modified"] == "true" {
			modified = " (modified)"
		}
		fmt.Fprintf(w, "revision %s%s\n", rev, modified)
		if t := vcs["vcs.time"]; t != "" {
			fmt.Fprintf(w, "commit time %s\n", t)
		}
	} else {
		fmt.Fprintln(w, "revision unknown (built without VCS information, e.g. with -buildvcs=false)")
	}
	_, err := fmt.Fprintf(w, "go %s\n", bi.GoVersion)
	return err
}

// buildRevision is the VCS revision the binary was built from, with
// "-modified" for a tree with uncommitted changes, or "" when the build
// recorded none.
func buildRevision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" && modified == "true" {
		rev += "-modified"
	}
	return rev
}

// codeRevision names the code of this binary for the runs it records
// (pipeline.Config.Revision, experiments.Runner.Revision): its VCS
// revision, else its module version when installed as a released module,
// else "".
func codeRevision() string {
	if rev := buildRevision(); rev != "" {
		return rev
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return ""
}
