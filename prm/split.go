package prm

import (
	"math"
	"sort"
	"strconv"
)

// holdoutSplit puts trajectory i in the held-out set when a hash of its key
// (its task, so the rollouts of one task stay together and held-out figures
// measure unseen tasks) and seed, read as a number in [0, 1), falls below
// frac. A trajectory thus stays on the same side whatever else is in the
// data, so a warm-started refresh never trains on what an earlier version
// was evaluated on. Per class (success, failure): a class of two or more
// with nobody held out gets its lowest-hash member held out, so the AUC is
// defined, and one held out entirely gets its highest-hash member back for
// training (these exceptions may split a task). An empty key is replaced by
// the index.
func holdoutSplit(keys []string, success []bool, frac float64, seed uint64) (train, held []int) {
	var classes [2][]int
	u := make([]float64, len(keys))
	for i, key := range keys {
		if key == "" {
			key = "#" + strconv.Itoa(i)
		}
		u[i] = unitHash(key, seed)
		c := 0
		if success[i] {
			c = 1
		}
		classes[c] = append(classes[c], i)
	}
	for _, members := range classes {
		sort.Slice(members, func(a, b int) bool { return u[members[a]] < u[members[b]] })
		k := sort.Search(len(members), func(j int) bool { return u[members[j]] >= frac })
		switch {
		case len(members) < 2:
			k = 0
		case k == 0:
			k = 1
		case k == len(members):
			k--
		}
		held = append(held, members[:k]...)
		train = append(train, members[k:]...)
	}
	sort.Ints(train)
	sort.Ints(held)
	return train, held
}

// unitHash maps (s, seed) to a uniform number in [0, 1).
func unitHash(s string, seed uint64) float64 {
	h := seed ^ 0x68_6f_6c_64_6f_75_74
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return float64(finalize(h)>>11) / math.Exp2(53)
}
