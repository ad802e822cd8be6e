package swappersvc

import (
	"fmt"
	"testing"

	"github.com/rspo-dev/rspo/schemas"
	"github.com/rspo-dev/rspo/streams"
	"github.com/rspo-dev/rspo/swapper"
	"github.com/rspo-dev/rspo/swapper/swappertest"
)

// BenchmarkRecord measures the swapper's work per explorer message, off
// the bus: decode and validate, relabel, and make the swapped message,
// either encoding the record afresh (streams.SwappedMsg, the path before
// records were relabelled in their bytes) or patching the explorer
// message (streams.SwappedMsgFrom, the path the service takes).
func BenchmarkRecord(b *testing.B) {
	for _, steps := range []int{32, 88} {
		data := swappertest.Encode(swappertest.Explorer("r", 1, 3, steps))
		for _, path := range []string{"encode", "patch"} {
			b.Run(fmt.Sprintf("steps=%d/%s", steps, path), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					t, err := schemas.DecodeTrajectory(data)
					if err != nil {
						b.Fatal(err)
					}
					out, err := swapper.Relabel(t)
					if err != nil {
						b.Fatal(err)
					}
					if path == "encode" {
						_, err = streams.SwappedMsg(out)
					} else {
						var patched bool
						if _, patched, err = streams.SwappedMsgFrom(out, data); err == nil && !patched {
							err = fmt.Errorf("not patched")
						}
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/traj") // one goroutine, wall time
			})
		}
	}
}
