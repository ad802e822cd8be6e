package buffersvc

import "fmt"

// CycleStats describes the records of one cycle.
type CycleStats struct {
	Cycle   int64 `json:"cycle"`
	Records int64 `json:"records"`
	// Bytes is the total size of the records' wire form.
	Bytes     int64 `json:"bytes"`
	Successes int64 `json:"successes"`
	// SuccessFraction is Successes/Records (0 for an empty cycle).
	SuccessFraction float64 `json:"success_fraction"`
	MeanReward      float64 `json:"mean_reward"`
	// SamplesServed counts records returned by Sample for this cycle.
	SamplesServed int64 `json:"samples_served"`
}

// Stats describes a run's buffer. It travels as JSON on rspo.<run>.buffer.stats.
type Stats struct {
	Run string `json:"run"`
	// ClearedThrough is the highest cleared cycle, -1 if none.
	ClearedThrough int64        `json:"cleared_through"`
	Cycles         []CycleStats `json:"cycles"`
	// Totals over Cycles.
	Records         int64   `json:"records"`
	Bytes           int64   `json:"bytes"`
	SamplesServed   int64   `json:"samples_served"`
	SuccessFraction float64 `json:"success_fraction"`
	// Ingest holds the serving process's counters since it started (set by
	// Service, zero from Store.Stats).
	Ingest IngestCounters `json:"ingest"`
}

// IngestCounters count what a Service did with the messages it consumed.
type IngestCounters struct {
	Stored       int64 `json:"stored"`
	Replaced     int64 `json:"replaced"`
	Dropped      int64 `json:"dropped"`
	DeadLettered int64 `json:"dead_lettered"`
	Batches      int64 `json:"batches"`
}

// Stats returns the run's per-cycle statistics in cycle order.
func (s *Store) Stats(run string) (Stats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return Stats{}, ErrClosed
	}
	mark, err := readMark(s.db, run)
	if err != nil {
		return Stats{}, err
	}
	st := Stats{Run: run, ClearedThrough: mark, Cycles: []CycleStats{}}
	var successes int64
	err = scan(s.db, runPrefix(spaceStats, run), func(key, value []byte) (bool, error) {
		cycle, ok := cycleOfStatsKey(key, run)
		if !ok {
			return false, fmt.Errorf("%w: malformed stats key", ErrInternal)
		}
		c, err := decodeCounters(value)
		if err != nil {
			return false, err
		}
		cs := cycleStatsOf(cycle, c)
		st.Cycles = append(st.Cycles, cs)
		st.Records += cs.Records
		st.Bytes += cs.Bytes
		st.SamplesServed += cs.SamplesServed
		successes += cs.Successes
		return true, nil
	})
	if st.Records > 0 {
		st.SuccessFraction = float64(successes) / float64(st.Records)
	}
	return st, err
}

func cycleStatsOf(cycle int64, c cycleCounters) CycleStats {
	cs := CycleStats{Cycle: cycle, Records: c.Records, Bytes: c.Bytes,
		Successes: c.Successes, SamplesServed: c.Served}
	if c.Records > 0 {
		cs.SuccessFraction = float64(c.Successes) / float64(c.Records)
		cs.MeanReward = c.RewardSum / float64(c.Records)
	}
	return cs
}
