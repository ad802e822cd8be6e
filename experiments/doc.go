// Package experiments reruns the project's measurements: suites of training
// runs (a base configuration, named variants, seeds) executed one after the
// other through pipeline.Run, aggregated over seeds into tables and plots,
// and written up as a Markdown page.
//
// A suite is a JSON file (see the files beside this package and its
// README). Each (variant, seed) is one run with its own name and data
// directory; a run whose summary already exists is read back instead of
// trained again, so an interrupted suite resumes where it stopped.
//
// The aggregation reads only what a run leaves in its report directory
// (metrics.jsonl, summary.json) plus the runner's own cost record, so
// every figure of the page can be traced to a run and its command.
package experiments

import (
	_ "github.com/rspo-dev/rspo/envs/household" // registers "household"
	_ "github.com/rspo-dev/rspo/envs/shop"      // registers "shop"
)
