package streams

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rspo-dev/rspo/schemas"
)

// SubjectPrefix is the first token of every rspo subject.
const SubjectPrefix = "rspo"

// maxNameLen bounds run and component names; they appear in every subject,
// header and object key.
const maxNameLen = 64

// ValidateRun reports whether run can name a run: 1 to 64 characters from
// [A-Za-z0-9_-] (the rule of schemas.CheckRunName). Run names are subject
// tokens, so dots, wildcards and spaces are refused. The error is a
// *NameError.
func ValidateRun(run string) error { return validateToken("run", run) }

// ValidateComponent reports whether name can name a component in a metrics
// or dead-letter subject. The rules are those of ValidateRun.
func ValidateComponent(name string) error { return validateToken("component", name) }

func validateToken(kind, name string) error {
	bad := func(reason string) error { return &NameError{Kind: kind, Name: name, Reason: reason} }
	switch {
	case name == "":
		return bad("empty")
	case len(name) > maxNameLen:
		return bad(fmt.Sprintf("%d characters, at most %d", len(name), maxNameLen))
	}
	for _, r := range name {
		if !isTokenRune(r) {
			return bad(fmt.Sprintf("character %q not allowed (use letters, digits, '-' and '_')", r))
		}
	}
	return nil
}

func isTokenRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_'
}

// RunSubjects holds the subjects of one run. Build it with Subjects.
type RunSubjects struct {
	// Run is the run name the subjects are scoped by.
	Run string
	// TrajOnPolicy carries actors' trajectories: rspo.<run>.traj.onpolicy.
	TrajOnPolicy string
	// TrajExplore carries explorers' trajectories: rspo.<run>.traj.explore.
	TrajExplore string
	// Swapped carries relabelled buffer records: rspo.<run>.swapped.
	Swapped string
	// WorkRollout carries rollout requests: rspo.<run>.work.rollout.
	WorkRollout string
	// WorkExplore carries the shards of each cycle's exploration
	// (schemas.ExploreShard): rspo.<run>.work.explore. Like WorkRollout it
	// is a work-queue subject, consumed by a shared durable, not replayed.
	WorkExplore string
	// WorkEval carries the shards of the learner's evaluations
	// (schemas.EvalShard): rspo.<run>.work.eval, a work-queue subject like
	// WorkRollout, consumed by the actors' shared durable.
	WorkEval string
	// EvalAll matches the evaluation results of every update
	// (schemas.EvalResult on rspo.<run>.eval.<update>, see Eval).
	EvalAll string
	// BufferSample is the buffer service's sampling endpoint (request/reply).
	BufferSample string
	// BufferStats is the buffer service's statistics endpoint (request/reply).
	BufferStats string
	// PRMScore is the PRM service's scoring endpoint (request/reply).
	PRMScore string
	// Batch carries the learner's training batches for an external
	// trainer: rspo.<run>.batch.
	Batch string
	// CtrlAll, MetricsAll and DLQAll match every subject of their kind.
	CtrlAll, MetricsAll, DLQAll string
}

// Subjects returns the subjects of run. It does not validate run; services
// validate it once at start with ValidateRun, and the Publish functions
// check it on every call.
func Subjects(run string) RunSubjects {
	p := SubjectPrefix + "." + run + "."
	return RunSubjects{
		Run:          run,
		TrajOnPolicy: p + "traj." + string(schemas.SourceOnPolicy),
		TrajExplore:  p + "traj." + string(schemas.SourceExplore),
		Swapped:      p + "swapped",
		WorkRollout:  p + "work.rollout",
		WorkExplore:  p + "work.explore",
		WorkEval:     p + "work.eval",
		EvalAll:      p + "eval.>",
		BufferSample: p + "buffer.sample",
		BufferStats:  p + "buffer.stats",
		PRMScore:     p + "prm.score",
		Batch:        p + "batch",
		CtrlAll:      p + "ctrl.>",
		MetricsAll:   p + "metrics.>",
		DLQAll:       p + "dlq.>",
	}
}

// Traj returns the trajectory subject for a source.
func (s RunSubjects) Traj(src schemas.Source) string {
	return SubjectPrefix + "." + s.Run + ".traj." + string(src)
}

// Ctrl returns the subject of a control event type: rspo.<run>.ctrl.<type>.
// Event types contain a dot ("cycle.started"), so the subject has two
// tokens after ctrl.
func (s RunSubjects) Ctrl(t schemas.EventType) string {
	return SubjectPrefix + "." + s.Run + ".ctrl." + string(t)
}

// Eval returns the subject of the evaluation results of learner update
// update: rspo.<run>.eval.<update>. One subject per update lets the
// learner read only its evaluation's results and refuse a result that
// names another update than its subject.
func (s RunSubjects) Eval(update int64) string {
	return SubjectPrefix + "." + s.Run + ".eval." + strconv.FormatInt(update, 10)
}

// Metrics returns the metrics subject of a component.
func (s RunSubjects) Metrics(component string) string {
	return SubjectPrefix + "." + s.Run + ".metrics." + component
}

// DLQ returns the dead-letter subject of a component.
func (s RunSubjects) DLQ(component string) string {
	return SubjectPrefix + "." + s.Run + ".dlq." + component
}

// RunOf returns the run token of an rspo subject, or "" when subject is not
// of the form rspo.<run>.<...>.
func RunOf(subject string) string {
	rest, ok := strings.CutPrefix(subject, SubjectPrefix+".")
	if !ok {
		return ""
	}
	run, _, ok := strings.Cut(rest, ".")
	if !ok || ValidateRun(run) != nil {
		return ""
	}
	return run
}
