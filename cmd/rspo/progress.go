package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/rspo-dev/rspo/learner/learnersvc"
)

// progress shows how training goes: a progress bar on a terminal, a plain
// line per update otherwise. Each report carries the environment steps,
// steps per second, the learner's phase and an estimate of the time left,
// measured over the updates this process ran (not those it resumed from).
type progress struct {
	w   io.Writer
	bar *progressbar.ProgressBar // nil: plain lines
	now func() time.Time

	started    time.Time
	fromUpdate int64 // updates done when this process started
	fromSteps  int64
	haveStart  bool
	eval       float64
	phaseText  string
	// every, when above 1, prints only every every-th update as a plain
	// line, and the last (a source run's hundred updates); prefix starts
	// each line, telling a source run's updates from the run's own.
	every  int64
	prefix string
}

// newProgress reports to w, with a bar if w is a terminal.
func newProgress(w io.Writer) *progress {
	p := &progress{w: w, now: time.Now, eval: -1}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = newBar(w)
	}
	return p
}

// newBar is the terminal's progress bar. It shows the elapsed time but
// predicts none: its prediction would count the updates a resumed run
// starts from, and the description carries the one estimate (rates).
func newBar(w io.Writer) *progressbar.ProgressBar {
	return progressbar.NewOptions64(1, progressbar.OptionSetWriter(w), progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true), progressbar.OptionSetPredictTime(false), progressbar.OptionSetWidth(30))
}

// mark records where this process started counting from.
func (p *progress) mark(r learnersvc.Progress) {
	if !p.haveStart {
		p.started, p.fromUpdate, p.fromSteps, p.haveStart = p.now(), r.Update, r.EnvSteps, true
	}
}

// phase reports a phase the learner starts.
func (p *progress) phase(r learnersvc.Progress) {
	if r.Phase == learnersvc.PhaseResumed {
		fmt.Fprintf(p.w, "resuming from update %d/%d\n", r.Update, r.Updates)
	}
	p.mark(r)
	p.phaseText = phaseText(r)
	if p.bar != nil {
		p.bar.ChangeMax64(r.Updates)
		_ = p.bar.Set64(r.Update)
		p.bar.Describe(p.phaseText + p.rates(r))
	} else if r.Phase == learnersvc.PhasePRMWarmup {
		fmt.Fprintln(p.w, p.phaseText)
	}
}

// phaseText names a phase for the progress line.
func phaseText(r learnersvc.Progress) string {
	switch r.Phase {
	case learnersvc.PhasePRMWarmup:
		return "PRM warm-up"
	case learnersvc.PhaseExploring:
		return fmt.Sprintf("exploring cycle %d", r.Cycle)
	case learnersvc.PhaseUpdating:
		return fmt.Sprintf("updating %d/%d", r.Update+1, r.Updates)
	case learnersvc.PhaseResumed:
		return fmt.Sprintf("resumed at update %d", r.Update)
	}
	return ""
}

// update reports a finished update.
func (p *progress) update(r learnersvc.Progress) {
	p.mark(r)
	if r.EvalSuccess >= 0 {
		p.eval = r.EvalSuccess
	}
	if p.bar != nil {
		p.bar.ChangeMax64(r.Updates)
		desc := fmt.Sprintf("%strain success %.2f", p.prefix, r.SuccessRate)
		if p.eval >= 0 {
			desc += fmt.Sprintf(", eval %.2f", p.eval)
		}
		p.bar.Describe(desc + p.rates(r))
		_ = p.bar.Set64(r.Update)
		return
	}
	if p.every > 1 && r.Update%p.every != 0 && r.Update != r.Updates {
		return
	}
	fmt.Fprintln(p.w, p.line(r))
}

// line is the plain progress line of an update.
func (p *progress) line(r learnersvc.Progress) string {
	line := fmt.Sprintf("%supdate %d/%d", p.prefix, r.Update, r.Updates)
	if r.Cycle >= 0 {
		line += fmt.Sprintf("  cycle %d", r.Cycle)
	}
	line += fmt.Sprintf("  train success %.3f", r.SuccessRate)
	if r.EvalSuccess >= 0 {
		line += fmt.Sprintf("  eval success %.3f", r.EvalSuccess)
	}
	return line + p.rates(r)
}

// rates are the environment steps, steps per second and the time left,
// from what this process has done so far.
func (p *progress) rates(r learnersvc.Progress) string {
	s := fmt.Sprintf("  env steps %d", r.EnvSteps)
	elapsed := p.now().Sub(p.started)
	if elapsed <= 0 {
		return s
	}
	s += fmt.Sprintf("  %.0f steps/s", float64(r.EnvSteps-p.fromSteps)/elapsed.Seconds())
	if done := r.Update - p.fromUpdate; done > 0 && r.Update < r.Updates {
		left := time.Duration(float64(elapsed) / float64(done) * float64(r.Updates-r.Update))
		s += "  ETA " + left.Round(time.Second).String()
	}
	return s
}

// close ends the bar's line, so what follows starts on a line of its own.
func (p *progress) close() {
	if p.bar != nil && p.haveStart {
		fmt.Fprintln(p.w)
	}
}

// interrupted is the error of a run stopped by a signal: it says how to
// resume, and is context.Canceled for the exit status, without printing
// "context canceled".
type interrupted struct{ run string }

func (e interrupted) Error() string {
	return fmt.Sprintf("interrupted; run the same command again to resume run %s", e.run)
}

func (e interrupted) Is(target error) bool { return target == context.Canceled }
