package experiments

import (
	"testing"
	"time"
)

func TestMemorySamplerSeesAnAllocation(t *testing.T) {
	stop := startMemorySampler(time.Millisecond)
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	time.Sleep(5 * time.Millisecond)
	peak := stop()
	if peak < 64<<20 {
		t.Errorf("got peak %d bytes while holding 64 MiB, want at least %d", peak, 64<<20)
	}
	_ = buf[len(buf)-1]
}
