package household

import "hash/fnv"

// taskSpec is what a task asks for, before any home is built: the scene,
// the object kind, the target receptacle kind (unused for look tasks) and
// the instruction template.
type taskSpec struct {
	typ      ttype
	scene    scene
	obj      okind
	target   rkind
	template int
}

// candidate is one (scene, object, target) combination a task type can ask
// for, with its sampling weight.
type candidate struct {
	scene  scene
	obj    okind
	target rkind
	w      float64
}

// Held-out combinations: an (object kind, target) pair whose FNV-1a hash is
// 0 modulo heldOutModulus never occurs in train or eval_in_distribution
// tasks; eval_out_of_distribution tasks use only those pairs. The target of
// a look task is the desklamp.
const heldOutModulus = 5

// candidates[t][0] are the in-distribution combinations of type t,
// candidates[t][1] the held-out ones; weights[t][i] their weights.
var (
	candidates [numTypes][2][]candidate
	weights    [numTypes][2][]float64
)

func init() {
	for t := range numTypes {
		for _, c := range enumerate(t) {
			h := 0
			if heldOut(c, t) {
				h = 1
			}
			candidates[t][h] = append(candidates[t][h], c)
			weights[t][h] = append(weights[t][h], c.w)
		}
	}
}

// heldOut reports whether a combination belongs to the out-of-distribution split.
func heldOut(c candidate, t ttype) bool {
	target := lampName
	if t != lookAtObjInLight {
		target = recepKinds[c.target].name
	}
	h := fnv.New32a()
	h.Write([]byte(objKinds[c.obj].name + "/" + target))
	return h.Sum32()%heldOutModulus == 0
}

// enumerate lists every combination type t can ask for. Each (scene,
// object) pair gets total weight 1, spread over targets by the object's
// placement prior, so common places are common targets.
func enumerate(t ttype) []candidate {
	var out []candidate
	for s := range scenes {
		sc := scene(s)
		if !sceneSupports(sc, t) {
			continue
		}
		for o, info := range objKinds {
			if info.scenes&scenes[s].flag == 0 || info.abil&t.ability() == 0 {
				continue
			}
			out = append(out, targetsFor(t, sc, okind(o))...)
		}
	}
	return out
}

// targetsFor lists the target combinations for object kind o in scene s.
func targetsFor(t ttype, s scene, o okind) []candidate {
	if t == lookAtObjInLight {
		return []candidate{{scene: s, obj: o, w: 1}}
	}
	var out []candidate
	total := 0.0
	for _, p := range objPriors[o] {
		if scenes[s].limits[recepKinds[p.kind].name] == 0 || t.isTool(p.kind) {
			continue
		}
		out = append(out, candidate{s, o, p.kind, p.w})
		total += p.w
	}
	for i := range out {
		out[i].w /= total
	}
	return out
}

// sceneSupports reports whether scene s has what task type t needs.
func sceneSupports(s scene, t ttype) bool {
	l := scenes[s].limits
	switch t {
	case lookAtObjInLight:
		return scenes[s].lamp
	case pickCleanThenPlace:
		return l["sinkbasin"] > 0 || l["bathtubbasin"] > 0
	case pickHeatThenPlace:
		return l["microwave"] > 0
	case pickCoolThenPlace:
		return l["fridge"] > 0
	}
	return true
}

// specFor derives the spec of a task of type t from its seed; heldOut
// selects the out-of-distribution combinations.
func specFor(t ttype, seed int64, heldOut bool) taskSpec {
	r := newRNG(seed, streamSpec)
	h := 0
	if heldOut {
		h = 1
	}
	c := candidates[t][h][r.pick(weights[t][h])]
	return taskSpec{typ: t, scene: c.scene, obj: c.obj, target: c.target, template: r.intn(2)}
}

// instruction is the goal text of the spec.
func (s taskSpec) instruction() string {
	return s.typ.instruction(s.template, objKinds[s.obj].name, recepKinds[s.target].name)
}

// Streams of the seed-derived generators, so that adding draws to one part
// of world generation does not shift another.
const (
	streamSpec uint64 = iota + 1
	streamLayout
	streamTrainType
	streamKey
)
