//go:build unix

package listing_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used, user and system, every
// thread: the load's own goroutines and the collector's. On a shared
// machine it varies far less than elapsed time does.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
