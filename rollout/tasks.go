package rollout

import (
	"github.com/rspo-dev/rspo/envs"
	"github.com/rspo-dev/rspo/schemas"
)

// TaskOf turns a task reference carried on the bus into the environment's task.
func TaskOf(r schemas.TaskRef) envs.Task {
	return envs.Task{ID: r.ID, Type: r.Type, Split: r.Split, Seed: r.Seed, Instruction: r.Instruction}
}

// TaskRefOf is the inverse of TaskOf.
func TaskRefOf(t envs.Task) schemas.TaskRef {
	return schemas.TaskRef{ID: t.ID, Type: t.Type, Split: t.Split, Seed: t.Seed, Instruction: t.Instruction}
}

// TaskRefs converts tasks to their references, in order.
func TaskRefs(tasks []envs.Task) []schemas.TaskRef {
	refs := make([]schemas.TaskRef, len(tasks))
	for i, t := range tasks {
		refs[i] = TaskRefOf(t)
	}
	return refs
}
