package prmsvc

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
)

// DefaultSubjects are the subjects a Source reads by default: the on-policy
// trajectories and the swapped (outcome-labelled explorer) records, which
// together hold every outcome of a run. traj.explore is left out because its
// swapped copies are already in "swapped".
var DefaultSubjects = []streams.SubjectKind{streams.KindTrajOnPolicy, streams.KindSwapped}

// Source is one recorded run to learn from.
type Source struct {
	// Run is the run name. Required.
	Run string
	// FromSeq skips messages before this stream sequence in each stream read
	// (RSPO_TRAJ for traj.*, RSPO_SWAPPED for swapped). Default: the start.
	FromSeq uint64
	// Subjects are streams.ReplaySubjects kinds to read. Default
	// DefaultSubjects.
	Subjects []streams.SubjectKind
}

// CollectStats says what Collect read.
type CollectStats struct {
	// Trajectories is the number returned.
	Trajectories int `json:"trajectories"`
	// Successes counts successful ones among them.
	Successes int `json:"successes"`
	// Undecodable counts messages skipped because they did not decode.
	Undecodable int `json:"undecodable"`
	// Duplicates counts trajectories skipped because their id was seen.
	Duplicates int `json:"duplicates"`
	// LastSeq is the last stream sequence read per "run/subject", so a
	// later Collect can continue with FromSeq = LastSeq+1.
	LastSeq map[string]uint64 `json:"last_seq"`
}

// Collect replays the sources' subjects (streams.Replay) and returns their
// trajectories in order, each id once. Messages that do not decode are
// counted and skipped. Errors: invalid sources, or Replay's errors.
func Collect(ctx context.Context, js jetstream.JetStream, sources []Source) ([]*schemas.Trajectory, CollectStats, error) {
	if len(sources) == 0 {
		return nil, CollectStats{}, fmt.Errorf("%w: no source runs", ErrInvalidConfig)
	}
	st := CollectStats{LastSeq: map[string]uint64{}}
	seen := map[string]bool{}
	var out []*schemas.Trajectory
	for _, src := range sources {
		subjects := src.Subjects
		if len(subjects) == 0 {
			subjects = DefaultSubjects
		}
		for _, subj := range subjects {
			o := streams.ReplayOptions{Run: src.Run, Subject: subj, FromSeq: src.FromSeq}
			err := streams.Replay(ctx, js, o, func(m streams.Message) error {
				st.LastSeq[src.Run+"/"+string(subj)] = m.Seq
				switch {
				case m.Err != nil || m.Trajectory == nil:
					st.Undecodable++
				case seen[m.Trajectory.ID]:
					st.Duplicates++
				default:
					seen[m.Trajectory.ID] = true
					out = append(out, m.Trajectory)
				}
				return nil
			})
			if err != nil {
				return nil, st, fmt.Errorf("prmsvc: collect %s %s: %w", src.Run, subj, err)
			}
		}
	}
	st.Trajectories = len(out)
	for _, t := range out {
		if t.Success {
			st.Successes++
		}
	}
	return out, st, nil
}
