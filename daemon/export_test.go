package garmd

import (
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/quarantine"
)

// Every garmd a test starts collects PING replies briefly: its first
// quarantine round runs inside New, and the services are on loopback.
func init() {
	quarantineTuning.Store(&quarantine.Options{PingWait: 50 * time.Millisecond, InfoTimeout: time.Second})
}

// ShortQuarantineSweeps makes the garmds the test starts sweep every
// interval, collecting PING replies for pingWait.
func ShortQuarantineSweeps(t testing.TB, interval, pingWait time.Duration) {
	prev := quarantineTuning.Load()
	o := *prev
	o.Interval, o.PingWait = interval, pingWait
	quarantineTuning.Store(&o)
	t.Cleanup(func() { quarantineTuning.Store(prev) })
}
