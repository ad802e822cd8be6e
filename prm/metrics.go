package prm

import (
	"math"
	"sort"
)

// AUC returns the area under the ROC curve of score for separating positive
// from negative examples: the probability that a random positive scores
// higher than a random negative, ties counting one half (Mann–Whitney U).
// It returns 0.5 when either class is empty, where the AUC is undefined.
func AUC(scores []float64, positive []bool) float64 {
	ranks := averageRanks(scores)
	var nPos, nNeg, rankSum float64
	for i, p := range positive {
		if p {
			nPos++
			rankSum += ranks[i]
		} else {
			nNeg++
		}
	}
	if nPos == 0 || nNeg == 0 {
		return 0.5
	}
	return (rankSum - nPos*(nPos+1)/2) / (nPos * nNeg)
}

// Spearman returns the rank correlation of x and y (Pearson correlation of
// their average ranks, so ties are handled). It returns 0 when either side
// is constant or there are fewer than two pairs, where it is undefined.
func Spearman(x, y []float64) float64 {
	if len(x) != len(y) || len(x) < 2 {
		return 0
	}
	return pearson(averageRanks(x), averageRanks(y))
}

// MSE returns the mean of (a_i − b_i)², or 0 for empty input.
func MSE(a, b []float64) float64 {
	if len(a) == 0 {
		return 0
	}
	var s float64
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s / float64(len(a))
}

func pearson(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

// averageRanks returns 1-based ranks of v, tied values sharing the mean of
// their ranks.
func averageRanks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	ranks := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && v[idx[j]] == v[idx[i]] {
			j++
		}
		r := float64(i+j+1) / 2 // mean of ranks i+1 .. j
		for k := i; k < j; k++ {
			ranks[idx[k]] = r
		}
		i = j
	}
	return ranks
}
