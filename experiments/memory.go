package experiments

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// The runtime metrics of memory mapped by the Go runtime and, of that,
// memory already returned to the operating system.
const (
	totalMemory    = "/memory/classes/total:bytes"
	releasedMemory = "/memory/classes/heap/released:bytes"
)

// startMemorySampler samples the memory the Go runtime holds (mapped and
// not returned to the OS) every interval until the returned function is
// called; that function returns the peak. It first returns what earlier
// work left behind to the OS, so runs in one process are measured alike.
func startMemorySampler(every time.Duration) func() uint64 {
	debug.FreeOSMemory()
	var (
		mu   sync.Mutex
		peak uint64
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	sample := func() {
		s := []metrics.Sample{{Name: totalMemory}, {Name: releasedMemory}}
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
			return
		}
		mu.Lock()
		peak = max(peak, s[0].Value.Uint64()-s[1].Value.Uint64())
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
