package household

import (
	"math"
	"strings"
)

// recep is one receptacle of a home, e.g. "cabinet 3".
type recep struct {
	kind     rkind
	openable bool
	str      *recepStrings
}

// object is one object of a home, e.g. "apple 2". The desklamp is a fixed
// object: it cannot be taken.
type object struct {
	kind  okind
	fixed bool
	str   *objStrings
}

// world is the immutable part of an episode: the home's receptacles and
// objects, where everything starts, and the texts that never change.
type world struct {
	spec     taskSpec
	receps   []recep
	objs     []object
	startAt  []int16 // receptacle of each object at the start
	startOpn []bool  // whether each receptacle starts open
	lamp     int16   // index of the desklamp object, or -1
	room     string  // "You are in the middle of a room. Looking quickly around you, you see ..."
	welcome  string  // the first observation
}

// buildWorld generates the home of a task from its spec and seed.
func buildWorld(spec taskSpec, cfg Config, seed int64) *world {
	r := newRNG(seed, streamLayout)
	counts := receptacleCounts(spec, cfg, r)
	w := &world{spec: spec, lamp: -1}
	for k, n := range counts {
		for i := 1; i <= n; i++ {
			w.receps = append(w.receps, recep{kind: rkind(k), openable: recepKinds[k].openable, str: &recepNames[k][i]})
		}
	}
	w.startOpn = make([]bool, len(w.receps))
	for i, rc := range w.receps {
		w.startOpn[i] = !rc.openable || r.float() >= cfg.Closed
	}
	placeObjects(w, cfg, r)
	w.room = roomText(w)
	w.welcome = "-= Welcome to TextWorld, ALFRED! =-\n\n" + w.room + "\n\nYour task is to: " + spec.instruction()
	return w
}

// receptacleCounts decides how many receptacles of each kind the home has:
// the scene's anchor and whatever the task needs, then random kinds of the
// scene up to a size drawn from the config.
func receptacleCounts(spec taskSpec, cfg Config, r *rng) []int {
	sc := scenes[spec.scene]
	counts := make([]int, len(recepKinds))
	counts[mustRkind(sc.anchor)] = 1
	if spec.typ != lookAtObjInLight {
		counts[spec.target] = 1
	}
	if tool, ok := toolKind(spec); ok {
		counts[tool] = 1
	}
	if sc.lamp {
		counts[lampHost(sc, r)] = 1
	}
	n := cfg.MinReceptacles + r.intn(cfg.MaxReceptacles-cfg.MinReceptacles+1)
	room := make([]float64, len(recepKinds))
	for total := sum(counts); total < n; total++ {
		for k := range recepKinds {
			room[k] = float64(sc.limits[recepKinds[k].name] - counts[k])
		}
		k := r.pick(room)
		if k < 0 {
			break
		}
		counts[k]++
	}
	return counts
}

// toolKind is the appliance kind the task needs, if any.
func toolKind(spec taskSpec) (rkind, bool) {
	switch spec.typ {
	case pickHeatThenPlace:
		return rkMicrowave, true
	case pickCoolThenPlace:
		return rkFridge, true
	case pickCleanThenPlace:
		if scenes[spec.scene].limits["sinkbasin"] > 0 {
			return rkSinkbasin, true
		}
		return rkBathtubbasin, true
	}
	return 0, false
}

// lampHost picks the kind of receptacle the desklamp stands on.
func lampHost(sc sceneInfo, r *rng) rkind {
	var hosts []rkind
	for _, h := range lampHosts {
		if sc.limits[h] > 0 {
			hosts = append(hosts, mustRkind(h))
		}
	}
	return hosts[r.intn(len(hosts))]
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

// placeObjects creates the task's objects and distractors and puts each on a
// receptacle drawn from its kind's placement prior. Objects of the task's
// kind never start in a receptacle of the target kind, so no task starts
// solved. Objects are ordered by kind, then number.
func placeObjects(w *world, cfg Config, r *rng) {
	counts := objectCounts(w.spec, len(w.receps), cfg, r)
	for k, n := range counts {
		for i := 1; i <= n; i++ {
			w.objs = append(w.objs, object{kind: okind(k), str: &objNames[k][i]})
			w.startAt = append(w.startAt, placeOne(w, okind(k), r))
		}
	}
	if scenes[w.spec.scene].lamp {
		host := int16(-1)
		for i, rc := range w.receps {
			if host < 0 && isLampHost(rc.kind) {
				host = int16(i)
			}
		}
		w.lamp = int16(len(w.objs))
		w.objs = append(w.objs, object{kind: lampKind, fixed: true, str: &objNames[lampKind][1]})
		w.startAt = append(w.startAt, host)
	}
}

// isLampHost reports whether a desklamp may stand on receptacle kind k.
func isLampHost(k rkind) bool {
	for _, h := range lampHosts {
		if recepKinds[k].name == h {
			return true
		}
	}
	return false
}

// objectCounts decides how many objects of each kind the home has: one or
// two of the task's kind (two or three for pick_two), the rest distractors
// of other kinds found in the scene.
func objectCounts(spec taskSpec, receptacles int, cfg Config, r *rng) []int {
	counts := make([]int, len(objKinds))
	counts[spec.obj] = 1 + r.intn(2)
	if spec.typ == pickTwoAndPlace {
		counts[spec.obj]++
	}
	var pool []okind
	for k, info := range objKinds {
		if okind(k) != spec.obj && info.scenes&scenes[spec.scene].flag != 0 {
			pool = append(pool, okind(k))
		}
	}
	m := int(math.Round(float64(receptacles) * cfg.ObjectsPerReceptacle))
	m = min(m, counts[spec.obj]+len(pool)*maxObjNum)
	for total := counts[spec.obj]; total < m; {
		k := pool[r.intn(len(pool))]
		if counts[k] < maxObjNum {
			counts[k]++
			total++
		}
	}
	return counts
}

// placeOne draws the receptacle an object of kind k starts in.
func placeOne(w *world, k okind, r *rng) int16 {
	weights := make([]float64, len(w.receps))
	isTarget := k == w.spec.obj && w.spec.typ != lookAtObjInLight
	for i, rc := range w.receps {
		if isTarget && rc.kind == w.spec.target {
			continue
		}
		weights[i] = 1e-3 // anywhere is possible, if unlikely
		for _, p := range objPriors[k] {
			if p.kind == rc.kind {
				weights[i] = p.w
			}
		}
	}
	return int16(r.pick(weights))
}

// roomText lists every receptacle as ALFWorld does on arrival.
func roomText(w *world) string {
	var b strings.Builder
	b.WriteString("You are in the middle of a room. Looking quickly around you, you see ")
	for i, rc := range w.receps {
		writeListItem(&b, i, len(w.receps), "a "+rc.str.name)
	}
	b.WriteByte('.')
	return b.String()
}

// writeListItem writes item i of n in ALFWorld's list style:
// "a x", "a x, and a y", "a x, a y, and a z".
func writeListItem(b interface{ WriteString(string) (int, error) }, i, n int, item string) {
	switch {
	case i == 0:
	case i == n-1:
		b.WriteString(", and ")
	default:
		b.WriteString(", ")
	}
	b.WriteString(item)
}
