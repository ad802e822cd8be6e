package producers

import (
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"time"
)

// defaultAckWait is how long a claimed request or cycle survives without a
// heartbeat.
const defaultAckWait = 30 * time.Second

// fillWorkerDefaults sets the defaults actors and explorers share: a name
// "<kind>-<hostname>-<pid>", GOMAXPROCS parallel episodes, the ack wait and
// the default logger.
func fillWorkerDefaults(kind string, name *string, parallel *int, ackWait *time.Duration, logger **slog.Logger) {
	if *name == "" {
		host, _ := os.Hostname()
		*name = fmt.Sprintf("%s-%s-%d", kind, host, os.Getpid())
	}
	if *parallel <= 0 {
		*parallel = runtime.GOMAXPROCS(0)
	}
	if *ackWait <= 0 {
		*ackWait = defaultAckWait
	}
	if *logger == nil {
		*logger = slog.Default()
	}
}
