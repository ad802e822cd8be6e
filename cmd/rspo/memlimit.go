package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// defaultMemoryLimit is the soft memory limit the rspo process runs under
// unless told otherwise. Without one the Go heap grows to twice its live
// size between collections, and the embedded server's block buffers make
// a short run's live heap large: a medium-preset RSPO run peaked at 1.1–1.4
// GiB without a limit and at 513–555 MiB under 400–450 MiB (about 800 MiB
// under 512 MiB), a few per cent slower, with the same results. The limit
// is soft: a run whose live heap needs more gets it, with the collector's
// CPU capped.
const defaultMemoryLimit = "400MiB"

// memoryLimitFlag registers --memory-limit on fs.
func memoryLimitFlag(fs *pflag.FlagSet, v *string) {
	fs.StringVar(v, "memory-limit", defaultMemoryLimit,
		"soft memory limit of this process (e.g. 400MiB, 2GiB; off: none); GOMEMLIMIT in the environment takes precedence")
}

// applyMemoryLimit sets the soft memory limit from the flag's value, unless
// GOMEMLIMIT is set (the runtime has applied it already).
func applyMemoryLimit(v string) error {
	if os.Getenv("GOMEMLIMIT") != "" {
		return nil
	}
	n, err := parseSize(v)
	if err != nil {
		return fmt.Errorf("--memory-limit %q: %w", v, err)
	}
	if n > 0 {
		debug.SetMemoryLimit(n)
	}
	return nil
}

// parseSize parses "off" (0) or a positive size with an optional KiB, MiB
// or GiB suffix.
func parseSize(v string) (int64, error) {
	if v == "off" {
		return 0, nil
	}
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if s, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = s, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a positive size such as 512MiB or 2GiB, or off")
	}
	return n * mult, nil
}
