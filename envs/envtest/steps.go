package envtest

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rspo-dev/rspo/envs"
)

// checkDeterminism: two episodes of the same task driven by the same actions
// produce identical observations, results, admissible lists and state keys.
func checkDeterminism(env envs.Env, cfg Config) error {
	return eachEpisode(env, cfg, func(i int, task envs.Task, ep envs.Episode) error {
		first, err := playRandom(ep, episodeRNG(cfg, i), cfg.MaxEpisodeSteps)
		if err != nil {
			return err
		}
		again, err := env.Reset(task)
		if err != nil {
			return fmt.Errorf("Reset(%s) again: %w", task.ID, err)
		}
		second := make([]record, 0, len(first))
		for _, r := range first {
			res, err := again.Step(r.Action)
			if err != nil {
				return fmt.Errorf("task %s: replay Step(%q): %w", task.ID, r.Action, err)
			}
			second = append(second, snapshot(again, r.Action, res))
		}
		if err := diffRecords(first, second); err != nil {
			return fmt.Errorf("task %s is not deterministic: %w", task.ID, err)
		}
		if ep.Outcome() != again.Outcome() || ep.Success() != again.Success() {
			return fmt.Errorf("task %s: outcomes differ: %v/%v vs %v/%v",
				task.ID, ep.Outcome(), ep.Success(), again.Outcome(), again.Success())
		}
		return nil
	})
}

// checkAdmissible: admissible lists are non-empty, duplicate-free and stable
// between calls; every admissible action is accepted and never answered with
// the environment's reply to an inadmissible action. In the first task every
// admissible action of every visited state is tried.
func checkAdmissible(env envs.Env, cfg Config) error {
	tasks, err := sampleTasks(env, cfg, cfg.Episodes)
	if err != nil {
		return err
	}
	for i, task := range tasks {
		nothing, err := inadmissibleReply(env, task)
		if err != nil {
			return err
		}
		ep, err := env.Reset(task)
		if err != nil {
			return fmt.Errorf("Reset(%s): %w", task.ID, err)
		}
		rng := episodeRNG(cfg, i)
		var path []string
		for !ep.Done() && ep.Steps() < cfg.MaxEpisodeSteps {
			acts := copyActions(ep)
			if err := wellFormed(ep, acts); err != nil {
				return err
			}
			if i == 0 {
				if err := tryEach(env, task, path, acts, nothing); err != nil {
					return err
				}
			}
			a := acts[rng.IntN(len(acts))]
			if err := stepAdmissible(ep, a, nothing); err != nil {
				return err
			}
			path = append(path, a)
		}
	}
	return nil
}

// inadmissibleReply returns the observation a fresh episode of task gives
// for an inadmissible action.
func inadmissibleReply(env envs.Env, task envs.Task) (string, error) {
	ep, err := env.Reset(task)
	if err != nil {
		return "", fmt.Errorf("Reset(%s): %w", task.ID, err)
	}
	res, err := ep.Step(notAnAction)
	if err != nil {
		return "", fmt.Errorf("task %s: Step(%q): %w", task.ID, notAnAction, err)
	}
	if res.Admissible {
		return "", fmt.Errorf("task %s: Step(%q) reported Admissible", task.ID, notAnAction)
	}
	return res.Observation, nil
}

// wellFormed checks one admissible list.
func wellFormed(ep envs.Episode, acts []string) error {
	id := ep.Task().ID
	if len(acts) == 0 {
		return fmt.Errorf("task %s: no admissible actions at step %d of a running episode", id, ep.Steps())
	}
	if d, ok := duplicate(acts); ok {
		return fmt.Errorf("task %s: admissible action %q listed twice", id, d)
	}
	if slices.Contains(acts, "") {
		return fmt.Errorf("task %s: empty admissible action", id)
	}
	if !slices.Equal(acts, ep.Admissible()) {
		return fmt.Errorf("task %s: two calls of Admissible() differ at step %d", id, ep.Steps())
	}
	return nil
}

// stepAdmissible takes admissible action a and checks the reply.
func stepAdmissible(ep envs.Episode, a, nothing string) error {
	id := ep.Task().ID
	res, err := ep.Step(a)
	if err != nil {
		return fmt.Errorf("task %s: admissible Step(%q): %w", id, a, err)
	}
	switch {
	case !res.Admissible:
		return fmt.Errorf("task %s: admissible action %q reported as inadmissible", id, a)
	case res.Observation == nothing:
		return fmt.Errorf("task %s: admissible action %q answered %q", id, a, nothing)
	case res.Observation != ep.Observation():
		return fmt.Errorf("task %s: Observation() = %q after Step, want %q", id, ep.Observation(), res.Observation)
	}
	return nil
}

// tryEach replays path and takes each of acts in a fresh copy of the state.
func tryEach(env envs.Env, task envs.Task, path, acts []string, nothing string) error {
	for _, a := range acts {
		ep, err := replay(env, task, path)
		if err != nil {
			return err
		}
		if err := stepAdmissible(ep, a, nothing); err != nil {
			return fmt.Errorf("after %q: %w", path, err)
		}
	}
	return nil
}

// checkInadmissible: an inadmissible action counts as a step, changes no
// state and no admissible action, and pays no reward.
func checkInadmissible(env envs.Env, cfg Config) error {
	return eachEpisode(env, cfg, func(i int, task envs.Task, ep envs.Episode) error {
		rng := episodeRNG(cfg, i)
		for !ep.Done() && ep.Steps() < cfg.MaxEpisodeSteps {
			if rng.IntN(3) == 0 {
				if err := wasteStep(ep); err != nil {
					return err
				}
				continue
			}
			acts := ep.Admissible()
			if _, err := ep.Step(acts[rng.IntN(len(acts))]); err != nil {
				return fmt.Errorf("task %s: %w", task.ID, err)
			}
		}
		return nil
	})
}

// wasteStep takes an inadmissible action and checks that nothing but the
// step count (and possibly the end by step limit) changed.
func wasteStep(ep envs.Episode) error {
	id := ep.Task().ID
	key, steps, acts := ep.StateKey(), ep.Steps(), copyActions(ep)
	res, err := ep.Step(notAnAction)
	if err != nil {
		return fmt.Errorf("task %s: Step(%q): %w", id, notAnAction, err)
	}
	switch {
	case res.Admissible:
		return fmt.Errorf("task %s: %q reported as admissible", id, notAnAction)
	case ep.Steps() != steps+1:
		return fmt.Errorf("task %s: inadmissible action: Steps() = %d, want %d", id, ep.Steps(), steps+1)
	case ep.StateKey() != key:
		return fmt.Errorf("task %s: inadmissible action changed the state key", id)
	case res.Observation == "":
		return fmt.Errorf("task %s: inadmissible action gave an empty observation", id)
	case !res.Done && res.Reward != 0:
		return fmt.Errorf("task %s: inadmissible action paid %v", id, res.Reward)
	case !res.Done && !slices.Equal(acts, ep.Admissible()):
		return fmt.Errorf("task %s: inadmissible action changed the admissible list", id)
	case res.Done && ep.Success():
		return fmt.Errorf("task %s: inadmissible action completed the task", id)
	}
	return nil
}

// checkStepLimit: wasting every step ends the episode at the step limit
// with outcome 0, and random play never runs past it.
func checkStepLimit(env envs.Env, cfg Config) error {
	tasks, err := sampleTasks(env, cfg, cfg.Episodes)
	if err != nil {
		return err
	}
	for i, task := range tasks {
		if err := wasteAll(env, task, cfg); err != nil {
			return err
		}
		ep, err := env.Reset(task)
		if err != nil {
			return fmt.Errorf("Reset(%s): %w", task.ID, err)
		}
		if _, err := playRandom(ep, episodeRNG(cfg, i), cfg.MaxEpisodeSteps); err != nil {
			return err
		}
	}
	return nil
}

// wasteAll takes only inadmissible actions until the episode ends.
func wasteAll(env envs.Env, task envs.Task, cfg Config) error {
	ep, err := env.Reset(task)
	if err != nil {
		return fmt.Errorf("Reset(%s): %w", task.ID, err)
	}
	var last envs.StepResult
	for !ep.Done() {
		if ep.Steps() >= cfg.MaxEpisodeSteps {
			return fmt.Errorf("task %s: still running after %d inadmissible steps", task.ID, ep.Steps())
		}
		if last, err = ep.Step(notAnAction); err != nil {
			return fmt.Errorf("task %s: Step(%q): %w", task.ID, notAnAction, err)
		}
	}
	switch {
	case !last.Done:
		return fmt.Errorf("task %s: Done() is true but the last StepResult.Done is false", task.ID)
	case cfg.StepLimit > 0 && ep.Steps() != cfg.StepLimit:
		return fmt.Errorf("task %s: ended after %d steps, want the step limit %d", task.ID, ep.Steps(), cfg.StepLimit)
	case ep.Success() || ep.Outcome() != 0 || last.Reward != 0:
		return fmt.Errorf("task %s: wasted episode got success %v, outcome %v, reward %v; want false, 0, 0",
			task.ID, ep.Success(), ep.Outcome(), last.Reward)
	}
	return nil
}

// checkEpisodeDone: stepping a finished episode returns ErrEpisodeDone and
// changes nothing.
func checkEpisodeDone(env envs.Env, cfg Config) error {
	return eachEpisode(env, cfg, func(i int, task envs.Task, ep envs.Episode) error {
		first := copyActions(ep)
		if _, err := playRandom(ep, episodeRNG(cfg, i), cfg.MaxEpisodeSteps); err != nil {
			return err
		}
		steps, outcome, key := ep.Steps(), ep.Outcome(), ep.StateKey()
		for _, a := range append(first, notAnAction) {
			if _, err := ep.Step(a); !errors.Is(err, envs.ErrEpisodeDone) {
				return fmt.Errorf("task %s: Step(%q) after the end: got error %v, want ErrEpisodeDone", task.ID, a, err)
			}
		}
		if !ep.Done() || ep.Steps() != steps || ep.Outcome() != outcome || ep.StateKey() != key {
			return fmt.Errorf("task %s: stepping a finished episode changed it", task.ID)
		}
		return nil
	})
}

// checkRewards: the reward is 0 until the last step, which pays the outcome;
// outcomes lie in [0, 1] and a success has a positive outcome. An
// environment that declares its bounds (envs.Bounded) keeps them: every
// reward, outcome and score in its range, and the success claims they
// make.
func checkRewards(env envs.Env, cfg Config) error {
	b, declared := env.(envs.Bounded)
	if declared {
		if err := b.Bounds().Validate(); err != nil {
			return err
		}
	}
	return eachEpisode(env, cfg, func(i int, task envs.Task, ep envs.Episode) error {
		recs, err := playRandom(ep, episodeRNG(cfg, i), cfg.MaxEpisodeSteps)
		if err != nil {
			return err
		}
		if err := checkEpisodeRewards(ep, recs); err != nil {
			return err
		}
		if declared {
			return checkEpisodeBounds(b.Bounds(), ep, recs)
		}
		return nil
	})
}

// checkEpisodeBounds checks one finished episode against declared bounds.
func checkEpisodeBounds(b envs.Bounds, ep envs.Episode, recs []record) error {
	id := ep.Task().ID
	for i, r := range recs {
		if !b.Reward.Contains(r.Reward) {
			return fmt.Errorf("task %s: step %d pays %v, outside the declared reward range %v", id, i+1, r.Reward, b.Reward)
		}
	}
	if s := envs.Score(ep); !b.Score.Contains(s) {
		return fmt.Errorf("task %s: score %v outside the declared score range %v", id, s, b.Score)
	}
	if err := b.CheckOutcome(ep.Outcome(), ep.Success()); err != nil {
		return fmt.Errorf("task %s: against the declared bounds: %w", id, err)
	}
	return nil
}

// checkEpisodeRewards checks the rewards of one finished episode.
func checkEpisodeRewards(ep envs.Episode, recs []record) error {
	id := ep.Task().ID
	if len(recs) == 0 {
		return fmt.Errorf("task %s: episode ended without a step", id)
	}
	for i, r := range recs[:len(recs)-1] {
		if r.Reward != 0 || r.Done {
			return fmt.Errorf("task %s: step %d of %d: reward %v, done %v; want 0, false", id, i+1, len(recs), r.Reward, r.Done)
		}
	}
	last := recs[len(recs)-1]
	switch o := ep.Outcome(); {
	case !last.Done:
		return fmt.Errorf("task %s: last step not marked done", id)
	case o < 0 || o > 1:
		return fmt.Errorf("task %s: outcome %v outside [0, 1]", id, o)
	case last.Reward != o:
		return fmt.Errorf("task %s: last reward %v, want the outcome %v", id, last.Reward, o)
	case ep.Success() && o <= 0:
		return fmt.Errorf("task %s: success with outcome %v", id, o)
	}
	return nil
}
