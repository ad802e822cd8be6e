package household

import (
	"errors"
	"fmt"

	"github.com/rspo-dev/rspo/envs"
)

// Errors of the expert.
var (
	// ErrForeignEpisode means ExpertAction got an episode of another environment.
	ErrForeignEpisode = errors.New("household: not a household episode")
	// errNoPlan means the planner chose a command that is not admissible: a bug.
	errNoPlan = errors.New("household: expert plan is not admissible")
)

// ExpertAction returns the next action of a planner that sees the hidden
// state (where every object is, closed receptacles included). It works from
// any state, not only from the start, and solves every task within a
// handful of steps: fetch an object of the task's kind, treat it with the
// appliance if the task asks for it, and carry it to the target (or to the
// desklamp). It returns envs.ErrEpisodeDone for a finished episode and
// ErrForeignEpisode for an episode it did not create.
func (env *Env) ExpertAction(ep envs.Episode) (string, error) {
	e, ok := ep.(*episode)
	if !ok {
		return "", fmt.Errorf("%w: %T", ErrForeignEpisode, ep)
	}
	if e.done {
		return "", envs.ErrEpisodeDone
	}
	c := e.plan()
	for i, ac := range e.cmds {
		if ac == c {
			return e.acts[i], nil
		}
	}
	return "", fmt.Errorf("%w: %+v in task %s", errNoPlan, c, e.task.ID)
}

// plan chooses the expert's next command.
func (e *episode) plan() command {
	s := e.w.spec
	switch {
	case e.hand >= 0 && e.w.objs[e.hand].kind != s.obj:
		return e.putDown()
	case e.hand < 0:
		return e.fetch()
	case s.typ == lookAtObjInLight:
		l := e.w.lamp
		if host := e.objAt[l]; e.at != host {
			return command{opGoTo, -1, host}
		}
		return command{opUse, l, e.at}
	}
	if need := s.typ.needFlag(); e.flags[e.hand]&need != need {
		return e.treat(need)
	}
	return e.reach(e.targetRecep(), command{opMove, e.hand, e.targetRecep()})
}

// reach returns the command that brings the agent to receptacle r with its
// contents reachable, or final once it is.
func (e *episode) reach(r int16, final command) command {
	switch {
	case e.at != r:
		return command{opGoTo, -1, r}
	case !e.visible(r):
		return command{opOpen, -1, r}
	}
	return final
}

// fetch takes an object of the task's kind that is not yet where it must
// end up, preferring one at the agent's receptacle.
func (e *episode) fetch() command {
	best := int16(-1)
	skip := int16(-2)
	if e.w.spec.typ == pickTwoAndPlace {
		skip = e.targetRecep()
	}
	for o, at := range e.objAt {
		if at < 0 || at == skip || e.w.objs[o].kind != e.w.spec.obj {
			continue
		}
		if best < 0 || at == e.at {
			best = int16(o)
		}
		if at == e.at {
			break
		}
	}
	r := e.objAt[best]
	return e.reach(r, command{opTake, best, r})
}

// treat brings the held object to the appliance that gives it flag need.
func (e *episode) treat(need uint8) command {
	v := opCool
	switch need {
	case flagClean:
		v = opClean
	case flagHot:
		v = opHeat
	}
	for r, rc := range e.w.receps {
		if applianceOp(rc.kind) == v {
			if e.at != int16(r) {
				return command{opGoTo, -1, int16(r)}
			}
			return command{v, e.hand, int16(r)}
		}
	}
	panic("household: home has no appliance for its task")
}

// targetRecep is the receptacle the expert delivers to: for pick_two the
// target-kind receptacle already holding most objects of the task's kind,
// otherwise the first of the target kind.
func (e *episode) targetRecep() int16 {
	best, most := int16(-1), -1
	for r, rc := range e.w.receps {
		if rc.kind != e.w.spec.target {
			continue
		}
		n := 0
		if e.w.spec.typ == pickTwoAndPlace {
			n = e.countAt(e.w.spec.obj, int16(r))
		}
		if n > most {
			best, most = int16(r), n
		}
	}
	return best
}

// putDown gets rid of an object the task does not need: here if possible,
// else on the first receptacle that is never closed.
func (e *episode) putDown() command {
	if e.at >= 0 {
		return e.reach(e.at, command{opMove, e.hand, e.at})
	}
	for r, rc := range e.w.receps {
		if !rc.openable {
			return command{opGoTo, -1, int16(r)}
		}
	}
	return command{opGoTo, -1, 0}
}
