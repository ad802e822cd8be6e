package household

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/rspo-dev/rspo/envs"
)

// The fixed evaluation splits reproduce the size and task-type mix of
// ALFWorld's valid_seen (140 tasks) and valid_unseen (134 tasks) sets, in
// TaskTypes order. Their seeds derive from fixed constants, so the lists
// never change unless the catalog does (a golden file guards them).
var fixedMix = map[string][numTypes]int{
	envs.SplitEvalIn:  {pickAndPlace: 35, pickTwoAndPlace: 24, lookAtObjInLight: 13, pickCleanThenPlace: 27, pickHeatThenPlace: 16, pickCoolThenPlace: 25},
	envs.SplitEvalOut: {pickAndPlace: 24, pickTwoAndPlace: 17, lookAtObjInLight: 18, pickCleanThenPlace: 31, pickHeatThenPlace: 23, pickCoolThenPlace: 21},
}

// fixedSeed is the generator seed of each fixed split.
var fixedSeed = map[string]int64{
	envs.SplitEvalIn:  0x5eed_0140,
	envs.SplitEvalOut: 0x5eed_0134,
}

// fixedTasks holds the fixed splits, built once at init.
var fixedTasks = map[string][]envs.Task{}

func init() {
	for split := range fixedMix {
		fixedTasks[split] = buildFixed(split)
	}
}

// buildFixed generates a fixed split: its task types in a shuffled order,
// each task with its own seed.
func buildFixed(split string) []envs.Task {
	var types []ttype
	for t, n := range fixedMix[split] {
		for range n {
			types = append(types, ttype(t))
		}
	}
	r := newRNG(fixedSeed[split], streamTrainType)
	for i := len(types) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		types[i], types[j] = types[j], types[i]
	}
	tasks := make([]envs.Task, len(types))
	for i, t := range types {
		seed := int64(r.next() >> 1)
		tasks[i] = makeTask(split, strconv.Itoa(i), t, seed)
	}
	return tasks
}

// makeTask builds a task whose instruction is derived from its seed.
func makeTask(split, n string, t ttype, seed int64) envs.Task {
	spec := specFor(t, seed, split == envs.SplitEvalOut)
	return envs.Task{
		ID:          Name + "/" + split + "/" + n,
		Type:        typeNames[t],
		Split:       split,
		Seed:        seed,
		Instruction: spec.instruction(),
	}
}

// isSplit reports whether split is one of the environment's splits.
func isSplit(split string) bool {
	_, fixed := fixedMix[split]
	return fixed || split == envs.SplitTrain
}

// ErrTaskCount means Tasks was asked for a non-positive number of train tasks.
var ErrTaskCount = errors.New("household: train tasks need n > 0")

// Tasks returns tasks of a split. For train it generates n tasks from seed,
// with task types drawn from the configuration's TaskMix and ids
// "household/train/<task seed>". For the fixed splits it returns the first
// n tasks ("household/<split>/<index>"), or all of them when n ≤ 0 or n
// exceeds the split; seed is then ignored.
func (env *Env) Tasks(split string, n int, seed int64) ([]envs.Task, error) {
	if fixed, ok := fixedTasks[split]; ok {
		if n <= 0 || n > len(fixed) {
			n = len(fixed)
		}
		return append([]envs.Task(nil), fixed[:n]...), nil
	}
	if split != envs.SplitTrain {
		return nil, fmt.Errorf("%w %q (household has %v)", envs.ErrUnknownSplit, split, env.Splits())
	}
	if n <= 0 {
		return nil, fmt.Errorf("%w, got %d", ErrTaskCount, n)
	}
	r := newRNG(seed, streamTrainType)
	tasks := make([]envs.Task, n)
	for i := range tasks {
		s := int64(r.next() >> 1)
		t := ttype(newRNG(s, streamTrainType).pick(env.cfg.TaskMix[:]))
		tasks[i] = makeTask(envs.SplitTrain, strconv.FormatInt(s, 10), t, s)
	}
	return tasks, nil
}
