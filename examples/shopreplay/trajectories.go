package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
)

// itemPageMarker is the line every item page shows and no other page does.
const itemPageMarker = "[button] Buy Now [button_]"

// maxRowBytes bounds one exported row (a step's observation is a few
// hundred bytes; the largest pages are under 4 KiB).
const maxRowBytes = 1 << 20

// trajectoryRow is what --trajectories reads of one row of
// `rspo export --format jsonl --subject traj.onpolicy`.
type trajectoryRow struct {
	Observation string `json:"observation"`
	Action      string `json:"action"`
	Success     bool   `json:"success"`
}

// stepTally counts recorded item-page steps by the action's kind, and
// those of episodes that went on to succeed.
type stepTally struct {
	steps, succeeded map[string]int
}

// trajectorySteps reports, from recorded trajectories, what a policy did
// on item pages and how often each choice's episode succeeded: the
// outcome a step-target PRM fits r̂(s, a) to, so this is what such a PRM
// trained on these trajectories learns each action to be worth.
func trajectorySteps(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	t, err := tallySteps(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	t.print(w)
	return nil
}

// tallySteps reads JSON lines of exported trajectory rows.
func tallySteps(r io.Reader) (stepTally, error) {
	t := stepTally{steps: map[string]int{}, succeeded: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxRowBytes)
	for line := 1; sc.Scan(); line++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var row trajectoryRow
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			return t, fmt.Errorf("line %d: %w", line, err)
		}
		if row.Action == "" {
			return t, fmt.Errorf("line %d: no action: want rows of rspo export --format jsonl --subject traj.onpolicy", line)
		}
		if !strings.Contains(row.Observation, itemPageMarker) {
			continue
		}
		k := kind(row.Action)
		t.steps[k]++
		if row.Success {
			t.succeeded[k]++
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return t, fmt.Errorf("a row longer than %d bytes", maxRowBytes)
	}
	return t, sc.Err()
}

func (t stepTally) print(w io.Writer) {
	fmt.Fprintln(w, "recorded steps on item pages by the action taken, and the share of their episodes that succeeded:")
	for _, k := range slices.Sorted(maps.Keys(t.steps)) {
		fmt.Fprintf(w, "  %-24s %7d  %.3f\n", k, t.steps[k], float64(t.succeeded[k])/float64(t.steps[k]))
	}
}
