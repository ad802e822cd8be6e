package household

import (
	"slices"
	"testing"

	"github.com/rspo-dev/rspo/envs"
)

// handWorld builds a small kitchen by hand: countertop 1 (apple 1), desk 1
// (desklamp 1), diningtable 1, fridge 1 (closed, apple 2), microwave 1
// (closed), sinkbasin 1 (mug 1).
func handWorld(spec taskSpec) *world {
	w := &world{spec: spec}
	for _, k := range []string{"countertop", "desk", "diningtable", "fridge", "microwave", "sinkbasin"} {
		kind := mustRkind(k)
		w.receps = append(w.receps, recep{kind: kind, openable: recepKinds[kind].openable, str: &recepNames[kind][1]})
		w.startOpn = append(w.startOpn, !recepKinds[kind].openable)
	}
	for _, o := range []struct {
		kind string
		num  int
		at   int16
	}{{"apple", 1, 0}, {"apple", 2, 3}, {"mug", 1, 5}, {lampName, 1, 1}} {
		k := okindByName[o.kind]
		w.objs = append(w.objs, object{kind: k, fixed: k == lampKind, str: &objNames[k][o.num]})
		w.startAt = append(w.startAt, o.at)
	}
	w.lamp = 3
	w.room = roomText(w)
	w.welcome = "welcome\n\n" + w.room
	return w
}

// specs returns the hand world's task specs; each asks for an apple (and
// the place tasks for the diningtable).
func specs(t ttype) taskSpec {
	return taskSpec{typ: t, obj: okindByName["apple"], target: mustRkind("diningtable")}
}

func handEpisode(spec taskSpec, maxSteps int) *episode {
	return newEpisode(handWorld(spec), envs.Task{ID: "hand", Seed: 1}, maxSteps)
}

func TestRules(t *testing.T) {
	tests := []struct {
		name    string
		spec    taskSpec
		actions []string
		want    string   // last observation
		has     []string // admissible afterwards
		hasNot  []string // not admissible afterwards
		success bool
	}{
		{name: "arrive at a surface", actions: []string{"go to countertop 1"},
			want: "You arrive at countertop 1. On the countertop 1, you see a apple 1.",
			has:  []string{"take apple 1 from countertop 1", "examine countertop 1"}, hasNot: []string{"go to countertop 1"}},
		{name: "closed receptacle hides its contents", actions: []string{"go to fridge 1"},
			want: "You arrive at fridge 1. The fridge 1 is closed.",
			has:  []string{"open fridge 1"}, hasNot: []string{"take apple 2 from fridge 1", "close fridge 1"}},
		{name: "opening shows the contents", actions: []string{"go to fridge 1", "open fridge 1"},
			want: "You open the fridge 1. The fridge 1 is open. In it, you see a apple 2.",
			has:  []string{"take apple 2 from fridge 1", "close fridge 1"}, hasNot: []string{"open fridge 1"}},
		{name: "close", actions: []string{"go to fridge 1", "open fridge 1", "close fridge 1"},
			want: "You close the fridge 1.", has: []string{"open fridge 1"}},
		{name: "examine a closed receptacle", actions: []string{"go to microwave 1", "examine microwave 1"},
			want: "The microwave 1 is closed."},
		{name: "empty receptacle", actions: []string{"go to diningtable 1"},
			want: "You arrive at diningtable 1. On the diningtable 1, you see nothing."},
		{name: "take", actions: []string{"go to countertop 1", "take apple 1 from countertop 1"},
			want: "You pick up the apple 1 from the countertop 1.",
			has:  []string{"move apple 1 to countertop 1", "examine apple 1"}, hasNot: []string{"take apple 1 from countertop 1"}},
		{name: "one object at a time", actions: []string{"go to countertop 1", "take apple 1 from countertop 1", "go to sinkbasin 1"},
			want: "You arrive at sinkbasin 1. On the sinkbasin 1, you see a mug 1.",
			has:  []string{"move apple 1 to sinkbasin 1", "clean apple 1 with sinkbasin 1"}, hasNot: []string{"take mug 1 from sinkbasin 1"}},
		{name: "no move into a closed receptacle", actions: []string{"go to countertop 1", "take apple 1 from countertop 1", "go to fridge 1"},
			has: []string{"cool apple 1 with fridge 1", "open fridge 1"}, hasNot: []string{"move apple 1 to fridge 1"},
			want: "You arrive at fridge 1. The fridge 1 is closed."},
		{name: "lists in ALFWorld style", actions: []string{"go to countertop 1", "take apple 1 from countertop 1", "go to sinkbasin 1", "move apple 1 to sinkbasin 1", "examine sinkbasin 1"},
			want: "On the sinkbasin 1, you see a apple 1, and a mug 1."},
		{name: "inventory empty", actions: []string{"inventory"}, want: "You are not carrying anything."},
		{name: "inventory holding", actions: []string{"go to countertop 1", "take apple 1 from countertop 1", "inventory"},
			want: "You are carrying: a apple 1."},
		{name: "look in the middle of the room", actions: []string{"look"},
			want: "You are in the middle of a room. Looking quickly around you, you see a countertop 1, a desk 1, a diningtable 1, a fridge 1, a microwave 1, and a sinkbasin 1."},
		{name: "look at a receptacle", actions: []string{"go to desk 1", "look"},
			want: "You are facing the desk 1. Next to it, you see nothing."},
		{name: "examine a plain object", actions: []string{"go to countertop 1", "take apple 1 from countertop 1", "examine apple 1"},
			want: "There's nothing special about apple 1."},
		{name: "heat", actions: []string{"go to countertop 1", "take apple 1 from countertop 1", "go to microwave 1", "heat apple 1 with microwave 1"},
			want: "You heat the apple 1 using the microwave 1."},
		{name: "hot", actions: []string{"go to countertop 1", "take apple 1 from countertop 1", "go to microwave 1", "heat apple 1 with microwave 1", "examine apple 1"},
			want: "This is a hot apple 1."},
		{name: "cooling undoes heating", actions: []string{"go to countertop 1", "take apple 1 from countertop 1", "go to microwave 1", "heat apple 1 with microwave 1", "go to fridge 1", "cool apple 1 with fridge 1", "examine apple 1"},
			want: "This is a cool apple 1."},
		{name: "clean and hot", actions: []string{"go to countertop 1", "take apple 1 from countertop 1", "go to sinkbasin 1", "clean apple 1 with sinkbasin 1", "go to microwave 1", "heat apple 1 with microwave 1", "examine apple 1"},
			want: "This is a clean and hot apple 1."},
		{name: "the desklamp is a fixture", actions: []string{"go to desk 1"},
			want: "You arrive at desk 1. On the desk 1, you see a desklamp 1.",
			has:  []string{"use desklamp 1"}, hasNot: []string{"take desklamp 1 from desk 1"}},
		{name: "lamp on", actions: []string{"go to desk 1", "use desklamp 1"}, want: "You turn on the desklamp 1."},
		{name: "lamp off", actions: []string{"go to desk 1", "use desklamp 1", "use desklamp 1"}, want: "You turn off the desklamp 1."},
		{name: "inadmissible", actions: []string{"go to bathroom 1"}, want: "Nothing happens."},
		{name: "take from afar is inadmissible", actions: []string{"take apple 1 from countertop 1"}, want: "Nothing happens."},
		{name: "an unheated apple is not the goal", actions: []string{"go to countertop 1", "take apple 1 from countertop 1", "go to diningtable 1", "move apple 1 to diningtable 1"},
			want: "You move the apple 1 to the diningtable 1."},
		{name: "a hot apple on the table is", success: true,
			actions: []string{"go to countertop 1", "take apple 1 from countertop 1", "go to microwave 1", "heat apple 1 with microwave 1", "go to diningtable 1", "move apple 1 to diningtable 1"},
			want:    "You move the apple 1 to the diningtable 1."},
		{name: "pick two needs both", spec: specs(pickTwoAndPlace),
			actions: []string{"go to countertop 1", "take apple 1 from countertop 1", "go to diningtable 1", "move apple 1 to diningtable 1"},
			want:    "You move the apple 1 to the diningtable 1."},
		{name: "pick two", spec: specs(pickTwoAndPlace), success: true,
			actions: []string{"go to countertop 1", "take apple 1 from countertop 1", "go to diningtable 1", "move apple 1 to diningtable 1",
				"go to fridge 1", "open fridge 1", "take apple 2 from fridge 1", "go to diningtable 1", "move apple 2 to diningtable 1"},
			want: "You move the apple 2 to the diningtable 1."},
		{name: "look at an object under the lamp", spec: specs(lookAtObjInLight), success: true,
			actions: []string{"go to countertop 1", "take apple 1 from countertop 1", "go to desk 1", "use desklamp 1"},
			want:    "You turn on the desklamp 1."},
		{name: "lamp already on", spec: specs(lookAtObjInLight), success: true,
			actions: []string{"go to desk 1", "use desklamp 1", "go to countertop 1", "take apple 1 from countertop 1", "go to desk 1"},
			want:    "You arrive at desk 1. On the desk 1, you see a desklamp 1."},
		{name: "the wrong object under the lamp", spec: specs(lookAtObjInLight),
			actions: []string{"go to sinkbasin 1", "take mug 1 from sinkbasin 1", "go to desk 1", "use desklamp 1"},
			want:    "You turn on the desklamp 1."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec
			if spec == (taskSpec{}) {
				spec = specs(pickHeatThenPlace)
			}
			ep := handEpisode(spec, 50)
			var res envs.StepResult
			for i, a := range tt.actions {
				var err error
				if res, err = ep.Step(a); err != nil {
					t.Fatalf("step %d %q: %v", i+1, a, err)
				}
			}
			if res.Observation != tt.want {
				t.Errorf("observation: got %q, want %q", res.Observation, tt.want)
			}
			if ep.Success() != tt.success || ep.Done() != tt.success {
				t.Errorf("got success %v, done %v; want %v", ep.Success(), ep.Done(), tt.success)
			}
			for _, a := range tt.has {
				if !slices.Contains(ep.Admissible(), a) {
					t.Errorf("%q is not admissible, want it to be; admissible: %q", a, ep.Admissible())
				}
			}
			for _, a := range tt.hasNot {
				if slices.Contains(ep.Admissible(), a) {
					t.Errorf("%q is admissible, want it not to be", a)
				}
			}
		})
	}
}

func TestStepLimit(t *testing.T) {
	ep := handEpisode(specs(pickHeatThenPlace), 3)
	for i, a := range []string{"look", "go to desk 1", "inventory"} {
		res, err := ep.Step(a)
		if err != nil {
			t.Fatal(err)
		}
		if last := i == 2; res.Done != last {
			t.Fatalf("step %d: got done %v, want %v", i+1, res.Done, last)
		}
	}
	if len(ep.Admissible()) != 0 {
		t.Errorf("got %d admissible actions after the end, want 0", len(ep.Admissible()))
	}
	if _, err := ep.Step("look"); err != envs.ErrEpisodeDone {
		t.Errorf("got %v, want ErrEpisodeDone", err)
	}
}
