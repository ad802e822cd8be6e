package experiments

import (
	"runtime/metrics"
	"sync"
	"time"
)

// totalMemory is the runtime metric of all memory the Go runtime holds.
const totalMemory = "/memory/classes/total:bytes"

// startMemorySampler samples the runtime's total memory every interval
// until the returned function is called; that function returns the peak.
func startMemorySampler(every time.Duration) func() uint64 {
	var (
		mu   sync.Mutex
		peak uint64
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	sample := func() {
		s := []metrics.Sample{{Name: totalMemory}}
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		mu.Lock()
		peak = max(peak, s[0].Value.Uint64())
		mu.Unlock()
	}
	sample()
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		sample()
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}
