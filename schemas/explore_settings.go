package schemas

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/rspo-dev/rspo/settings"
)

// ExploreSettings are the explorer's knobs: what the learner is told about
// exploration and sends, unchanged, with every cycle's plan (CyclePlan
// embeds them), so any number of explorers explore as the learner's
// command line says. Each field is a setting of `rspo run` and `rspo serve
// learner` declared here once (package settings reads the tags): its key,
// default, each recipe's value, range and help. A new explorer knob is a
// field here and the explorer code that reads it.
type ExploreSettings struct {
	// GroupSize is the number of rollouts per task in each explorer update.
	GroupSize int `json:"group_size" setting:"explore-group" alias:"explore_group_size" derived:"N/2, at least 2" count:"true" max:"1024" group:"explorer" stages:"run,learner" help:"explorer rollouts per task in each of its updates"`
	// Collect is the number of rollouts per task of the final π_B that are
	// published for the swap (0 is allowed when SwapAll publishes the
	// training rollouts instead).
	Collect int `json:"collect" setting:"explore-collect" alias:"explore_collect" default:"1" recipe:"tilted=2" min:"0" max:"1024" group:"explorer" stages:"run,learner" help:"final explorer rollouts per task for the buffer (0 needs --swap-all)"`
	// SwapAll publishes the explorer's training rollouts too, each with its
	// own behaviour log-probs, not only the final collection.
	SwapAll bool `json:"swap_all,omitempty" setting:"swap-all" alias:"swap_all" default:"false" group:"explorer" stages:"run,learner" help:"swap every explorer training rollout into the buffer, not only the final collection"`
	// Mode is how π_B is obtained. Empty (in plans of older learners)
	// means ExplorerPRM.
	Mode ExplorerMode `json:"mode,omitempty" setting:"explorer" default:"prm" enum:"prm|frozen|random-prm" group:"explorer" stages:"run,learner" help:"explorer mode: prm (the PRM's dense reward), frozen (π_B an unchanged copy of π_θ) or random-prm (an untrained PRM): the controls"`
	// Tilt, when > 0, replaces π_B's dense-reward training by acting-time
	// steering: π_B(a|s) ∝ π_θ(a|s)·exp(Tilt·r̂(s,a)).
	Tilt float64 `json:"tilt,omitempty" setting:"explore-tilt" alias:"explore_tilt" default:"0" recipe:"tilted=10" min:"0" max:"1000" group:"explorer" stages:"run,learner" help:"λ > 0: the explorer acts with π_θ·exp(λ·PRM score) instead of training π_B (0: the paper's trained explorer)"`
	// PRMNoise is σ of Gaussian noise added to every PRM score (ablation).
	PRMNoise float64 `json:"prm_noise,omitempty" setting:"prm-noise" alias:"prm_noise" default:"0" min:"0" max:"100" group:"explorer" stages:"run,learner" help:"σ of Gaussian noise on the explorer's PRM scores (ablation)"`
	// GateAUC, when > 0, keeps π_B a plain copy for a PRM whose held-out
	// AUC is below it.
	GateAUC float64 `json:"gate_auc,omitempty" setting:"gate-auc" alias:"gate_auc" default:"0" min:"0" max:"1" group:"explorer" stages:"run,learner" help:"the explorer shapes only with a PRM whose held-out AUC reaches this (0: off)"`
	// Verify asks the swapper to replay every trajectory of the cycle in
	// its environment and dead-letter those whose claimed outcome the
	// replay disproves.
	Verify bool `json:"verify,omitempty" setting:"verify" default:"false" group:"explorer" stages:"run,learner" help:"the swapper replays explorer trajectories to verify their outcome"`
	// Shards is how many work items (ExploreShard) the cycle's exploration
	// is split into: shard k collects the trajectories of the tasks
	// ShardTasks(k) names, with the seeds and ids the whole cycle would
	// give them, so what is explored does not depend on the shard count.
	// In the trained mode every shard trains the same π_B (training is
	// deterministic in the plan's seed) and only the collection is split.
	// 0, in plans written before sharding, means 1; at most len(Tasks).
	Shards int `json:"shards,omitempty" setting:"explore-shards" default:"1" count:"true" max:"1024" group:"scale" stages:"run,learner" help:"split each cycle's exploration into this many work items, for as many explorer processes; what is explored and trained does not depend on it (a trained π_B is trained in every shard, only its collection is split); at most the cycle's k·(1−α)·B tasks; excludes --prm-noise"`
}

// DefaultExploreSettings are the declared defaults of the explorer's
// settings (the paper's recipe); the group size, derived from N, is 0.
func DefaultExploreSettings() ExploreSettings {
	var s ExploreSettings
	settings.Defaults(&s, "")
	return s
}

// validate checks the settings against their declarations (ranges, known
// modes), reading the zeros of plans from older learners as they meant:
// an empty mode is prm, 0 shards one, a group size of 0 is left to
// CyclePlan.Validate.
func (s ExploreSettings) validate() error {
	if s.Mode == "" {
		s.Mode = ExplorerPRM
	}
	s.Shards = max(1, s.Shards)
	s.GroupSize = max(1, s.GroupSize)
	if err := settings.Validate(&s); err != nil {
		var ve *settings.ValueError
		if errors.As(err, &ve) {
			return &ValidationError{Field: "plan." + wireName(ve.Key), Reason: fmt.Sprintf("%s: want %s", ve.Value, ve.Want)}
		}
		return &ValidationError{Field: "plan", Reason: err.Error()}
	}
	return nil
}

// wireName is the JSON name, in a cycle plan, of the explorer setting
// whose key is key.
func wireName(key string) string {
	t := reflect.TypeOf(ExploreSettings{})
	for i := range t.NumField() {
		if f := t.Field(i); f.Tag.Get("setting") == key {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			return name
		}
	}
	return key
}
