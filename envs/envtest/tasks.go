package envtest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/rspo-dev/rspo/envs"
)

// checkMetadata: a name, non-empty duplicate-free splits and task types, and
// ErrUnknownSplit for a split the environment does not know.
func checkMetadata(env envs.Env, cfg Config) error {
	var errs []error
	if env.Name() == "" {
		errs = append(errs, errors.New("Name() is empty"))
	}
	if len(env.Splits()) == 0 {
		errs = append(errs, errors.New("Splits() is empty"))
	}
	if d, ok := duplicate(env.Splits()); ok {
		errs = append(errs, fmt.Errorf("Splits() lists %q twice", d))
	}
	if len(env.TaskTypes()) == 0 {
		errs = append(errs, errors.New("TaskTypes() is empty"))
	}
	if d, ok := duplicate(env.TaskTypes()); ok {
		errs = append(errs, fmt.Errorf("TaskTypes() lists %q twice", d))
	}
	if _, err := env.Tasks("no_such_split", 1, cfg.Seed); !errors.Is(err, envs.ErrUnknownSplit) {
		errs = append(errs, fmt.Errorf("Tasks(unknown split): got error %v, want ErrUnknownSplit", err))
	}
	return errors.Join(errs...)
}

// checkTasks: Tasks is deterministic, returns well-formed tasks with unique
// ids, fixed splits return all their tasks for n ≤ 0 with the first n as a
// prefix, and train depends on the seed.
func checkTasks(env envs.Env, cfg Config) error {
	var errs []error
	for _, split := range env.Splits() {
		if err := checkSplitTasks(env, cfg, split); err != nil {
			errs = append(errs, fmt.Errorf("split %s: %w", split, err))
		}
	}
	if slices.Contains(env.Splits(), envs.SplitTrain) {
		a, errA := env.Tasks(envs.SplitTrain, 5, cfg.Seed)
		b, errB := env.Tasks(envs.SplitTrain, 5, cfg.Seed+1)
		if err := errors.Join(errA, errB); err != nil {
			errs = append(errs, err)
		} else if reflect.DeepEqual(a, b) {
			errs = append(errs, fmt.Errorf("train tasks for seeds %d and %d are identical", cfg.Seed, cfg.Seed+1))
		}
	}
	return errors.Join(errs...)
}

// checkSplitTasks verifies the tasks of one split.
func checkSplitTasks(env envs.Env, cfg Config, split string) error {
	a, err := env.Tasks(split, 5, cfg.Seed)
	if err != nil {
		return fmt.Errorf("Tasks(%q, 5, %d): %w", split, cfg.Seed, err)
	}
	b, err := env.Tasks(split, 5, cfg.Seed)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Errorf("two calls of Tasks(%q, 5, %d) differ", split, cfg.Seed)
	}
	if len(a) == 0 || len(a) > 5 {
		return fmt.Errorf("Tasks(%q, 5, %d): got %d tasks, want 1..5", split, cfg.Seed, len(a))
	}
	if err := validTasks(env, split, a); err != nil {
		return err
	}
	if split == envs.SplitTrain {
		return nil
	}
	all, err := env.Tasks(split, 0, cfg.Seed)
	if err != nil {
		return fmt.Errorf("Tasks(%q, 0, %d): %w", split, cfg.Seed, err)
	}
	if len(all) < len(a) || !reflect.DeepEqual(all[:len(a)], a) {
		return fmt.Errorf("Tasks(%q, 5) is not a prefix of Tasks(%q, 0)", split, split)
	}
	return validTasks(env, split, all)
}

// validTasks checks the fields of tasks and that their ids are unique.
func validTasks(env envs.Env, split string, tasks []envs.Task) error {
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ID
		switch {
		case t.ID == "":
			return fmt.Errorf("task %d has an empty ID", i)
		case t.Split != split:
			return fmt.Errorf("task %s: got split %q, want %q", t.ID, t.Split, split)
		case !slices.Contains(env.TaskTypes(), t.Type):
			return fmt.Errorf("task %s: type %q is not in TaskTypes() %v", t.ID, t.Type, env.TaskTypes())
		case t.Instruction == "":
			return fmt.Errorf("task %s: empty instruction", t.ID)
		}
	}
	if d, ok := duplicate(ids); ok {
		return fmt.Errorf("task id %q occurs twice", d)
	}
	return nil
}

// checkReset: a fresh episode reports its task, an observation, admissible
// actions, zero steps and not done; the zero Task is rejected with an error.
func checkReset(env envs.Env, cfg Config) error {
	err := eachEpisode(env, cfg, func(_ int, task envs.Task, ep envs.Episode) error {
		switch {
		case ep.Task() != task:
			return fmt.Errorf("Task(): got %+v, want %+v", ep.Task(), task)
		case ep.Observation() == "":
			return fmt.Errorf("task %s: empty first observation", task.ID)
		case len(ep.Admissible()) == 0:
			return fmt.Errorf("task %s: no admissible actions at the start", task.ID)
		case ep.Done():
			return fmt.Errorf("task %s: done before the first step", task.ID)
		case ep.Steps() != 0:
			return fmt.Errorf("task %s: Steps() = %d at the start, want 0", task.ID, ep.Steps())
		}
		return nil
	})
	if err != nil {
		return err
	}
	if _, err := env.Reset(envs.Task{}); err == nil {
		return errors.New("Reset(Task{}) succeeded, want an error")
	}
	return nil
}

// eachEpisode resets a fresh episode of every sampled task and hands it to
// check with the task's index; the first error stops the walk.
func eachEpisode(env envs.Env, cfg Config, check func(i int, task envs.Task, ep envs.Episode) error) error {
	tasks, err := sampleTasks(env, cfg, cfg.Episodes)
	if err != nil {
		return err
	}
	for i, task := range tasks {
		ep, err := env.Reset(task)
		if err != nil {
			return fmt.Errorf("Reset(%s): %w", task.ID, err)
		}
		if err := check(i, task, ep); err != nil {
			return err
		}
	}
	return nil
}
