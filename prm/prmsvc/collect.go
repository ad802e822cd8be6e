package prmsvc

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

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
// trajectories, each id once: source by source and subject by subject, and
// within one subject of one source in the natural order of their ids
// (NaturalCompare), the order their producers numbered them, not the order
// they reached the stream. An actor publishes in that order, so its
// trajectories come back as recorded; an explorer's parallel rollouts
// reach the swapper, and the stream, in an order that varies from run to
// run, and a PRM trained on them in arrival order varied with it.
// Messages that do not decode are counted and skipped. Errors: invalid
// sources, or Replay's errors.
func Collect(ctx context.Context, js jetstream.JetStream, sources []Source) ([]*schemas.Trajectory, CollectStats, error) {
	var out []*schemas.Trajectory
	st, err := CollectEach(ctx, js, sources, func(ts []*schemas.Trajectory) error {
		out = append(out, ts...)
		return nil
	})
	if err != nil {
		return nil, st, err
	}
	return out, st, nil
}

// CollectEach is Collect handing the trajectories to fn one subject of one
// source at a time, in Collect's order, instead of returning them all: a
// caller that keeps what it needs of each (a PRM's feature rows) never
// holds every trajectory at once. An error of fn stops it.
func CollectEach(ctx context.Context, js jetstream.JetStream, sources []Source, fn func([]*schemas.Trajectory) error) (CollectStats, error) {
	if len(sources) == 0 {
		return CollectStats{}, fmt.Errorf("%w: no source runs", ErrInvalidConfig)
	}
	st := CollectStats{LastSeq: map[string]uint64{}}
	seen := map[string]bool{}
	for _, src := range sources {
		subjects := src.Subjects
		if len(subjects) == 0 {
			subjects = DefaultSubjects
		}
		for _, subj := range subjects {
			var group []*schemas.Trajectory
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
					group = append(group, m.Trajectory)
				}
				return nil
			})
			if err != nil {
				return st, fmt.Errorf("prmsvc: collect %s %s: %w", src.Run, subj, err)
			}
			slices.SortStableFunc(group, func(a, b *schemas.Trajectory) int { return NaturalCompare(a.ID, b.ID) })
			st.Trajectories += len(group)
			for _, t := range group {
				if t.Success {
					st.Successes++
				}
			}
			if err := fn(group); err != nil {
				return st, err
			}
		}
	}
	return st, nil
}

// NaturalCompare orders two trajectory ids as their producers number them:
// runs of digits compare as numbers ("c2-tilt.9" before "c2-tilt.10",
// "u9-v9-0" before "u10-v10-0"), the rest byte by byte. Of two equal
// numbers the one with more leading zeros comes after, so ids that differ
// never compare equal. It returns -1, 0 or +1.
func NaturalCompare(a, b string) int {
	for a != "" && b != "" {
		ca, ra := naturalChunk(a)
		cb, rb := naturalChunk(b)
		if c := compareChunk(ca, cb); c != 0 {
			return c
		}
		a, b = ra, rb
	}
	return cmp.Compare(len(a), len(b))
}

// naturalChunk splits s after its leading run of digits or of non-digits.
func naturalChunk(s string) (chunk, rest string) {
	digit := isDigit(s[0])
	i := 1
	for i < len(s) && isDigit(s[i]) == digit {
		i++
	}
	return s[:i], s[i:]
}

func compareChunk(a, b string) int {
	if !isDigit(a[0]) || !isDigit(b[0]) {
		return strings.Compare(a, b)
	}
	ta, tb := strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if c := cmp.Compare(len(ta), len(tb)); c != 0 { // more digits: a larger number
		return c
	}
	if c := strings.Compare(ta, tb); c != 0 {
		return c
	}
	return cmp.Compare(len(a), len(b))
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
