package learner

import (
	"sync"

	"github.com/rspo-dev/rspo/policy"
)

// worker holds one goroutine's scratch: its featuriser, its gradient, its
// figures, and its passes of the policy and of the reference, which keep
// what they can reuse while the parameters stay the same.
type worker struct {
	fz     *policy.Featurizer
	g      *policy.Grads
	acc    accum
	ps, rs policy.Pass
}

func newWorkers(p *policy.Policy, n int) []*worker {
	ws := make([]*worker, n)
	for i := range ws {
		ws[i] = &worker{fz: p.NewFeaturizer(), g: p.NewGrads()}
	}
	return ws
}

// parallel runs fn(w) for every worker w on its own goroutine and waits.
func (t *Trainer) parallel(fn func(w int)) {
	var wg sync.WaitGroup
	for w := range t.work {
		wg.Go(func() { fn(w) })
	}
	wg.Wait()
}

// eachSample runs fn over samples[i] for every i, split into contiguous
// shares over the workers (serially with one worker).
func (t *Trainer) eachSample(n int, fn func(w, i int)) {
	if len(t.work) <= 1 {
		for i := range n {
			fn(0, i)
		}
		return
	}
	k := len(t.work)
	t.parallel(func(w int) {
		for i := w * n / k; i < (w+1)*n/k; i++ {
			fn(w, i)
		}
	})
}
