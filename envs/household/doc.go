// Package household is an ALFWorld-like text household: procedurally
// generated homes (kitchens, living rooms, bedrooms, bathrooms) whose
// receptacles — countertops, cabinets, drawers, fridge, microwave, sinkbasin,
// shelves, desk, bed, garbagecan, safe, … numbered like "cabinet 3" — hold
// objects placed by plausible priors (an apple is more often in the fridge
// or on the countertop than in a drawer). Openable receptacles may start
// closed, and their contents stay hidden until the agent opens them.
//
// Tasks are ALFWorld's six types, phrased as ALFWorld phrases them:
//
//	pick_and_place         put a apple in fridge. / put some apple on fridge.
//	pick_two_and_place     put two cellphone in bed. / find two cellphone and put them in bed.
//	look_at_obj_in_light   look at bowl under the desklamp. / examine the bowl with the desklamp.
//	pick_clean_then_place  put a clean lettuce in diningtable. / clean some lettuce and put it in diningtable.
//	pick_heat_then_place   put a hot egg in countertop. / heat some egg and put it in countertop.
//	pick_cool_then_place   put a cool mug in cabinet. / cool some mug and put it in cabinet.
//
// The commands and observations follow ALFWorld: look, inventory, go to R,
// open R, close R, take O from R, move O to R, examine X, use R (a
// desklamp), heat O with R (microwave), cool O with R (fridge), clean O with
// R (sinkbasin, bathtubbasin). The agent holds one object at a time. An
// action not in the admissible list answers "Nothing happens." and wastes
// the step. The episode ends as soon as the goal holds (outcome 1) or at the
// step limit (outcome 0).
//
// # Difficulty
//
// Presets (option "preset"), easiest first:
//
//	preset    receptacles  start closed  task types                                  steps
//	easy      6–9          none          pick_and_place                              30
//	medium    12–18        half          pick_and_place, look_at_obj_in_light,       40
//	                                     pick_clean_then_place, pick_heat_then_place
//	alfworld  20–30        all           all six, ALFWorld's train mix (default)     50
//	hard      30–40        all           all six, equal weights; 1.5 objects per     50
//	                                     receptacle
//
// Options override a preset: max_steps=N, receptacles=N or MIN-MAX (4..40),
// closed=P (probability an openable receptacle starts closed),
// objects=R (objects per receptacle), task_types=a,b or a=3,b=1 (train mix).
// Unknown keys and bad values are errors wrapping ErrConfig.
//
// # Splits
//
// train generates tasks from any seed with the preset's task mix.
// eval_in_distribution is a fixed list of 140 tasks and
// eval_out_of_distribution a fixed list of 134, with ALFWorld's valid_seen
// and valid_unseen task-type counts. Out-of-distribution tasks use only
// (object, target) combinations — such as a hot potato in the garbagecan, or
// a keychain under the desklamp — that never occur in train or in-distribution
// tasks. The fixed splits' homes follow the environment's preset like train
// homes do; their task lists do not depend on it.
//
// # Determinism and state keys
//
// A task's home depends only on its seed, type, split and the configuration;
// the world generator is a local splitmix64, not math/rand, so seeds keep
// their homes across Go versions. StateKey is an incrementally maintained
// Zobrist hash of the agent's position, the held object, every object's
// place and state, the desklamp, and which receptacles are open.
//
// The package registers itself as "household" with envs.Register; Env also
// implements envs.Planner with an expert that sees the hidden state.
package household
