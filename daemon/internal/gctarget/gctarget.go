package gctarget

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Auto is the setting that lets garmd choose.
const Auto = "auto"

// The targets auto chooses: Bounded where a memory limit bounds the heap
// (the runtime collects harder as the heap nears it), Unbounded where none
// is known.
const (
	Bounded   = 400
	Unbounded = 200
)

// softLimit is the part of a container's memory limit auto sets as the
// soft limit, four fifths, leaving the rest for what is not Go heap (stacks,
// the runtime, buffers the kernel counts against the container).
func softLimit(container int64) int64 { return container * 4 / 5 }

// minPercent is the lowest target accepted: below it the collector runs
// almost continuously.
const minPercent = 25

// Decision is the target chosen, and why, for the startup report.
type Decision struct {
	// Percent is the GOGC applied; -1 means collection is off.
	Percent int
	// Kept says the environment's GOGC was kept: Percent is read back by
	// Apply.
	Kept bool
	// MemoryLimit is the soft memory limit in bytes; 0 means none.
	MemoryLimit int64
	// Source says who chose: "GOGC" (the environment), "--gogc" or "auto".
	Source string
	// Reason says why, in words.
	Reason string
	// setLimit says the limit is auto's own and must be applied.
	setLimit bool
}

// Environment is what the choice depends on outside the flag.
type Environment struct {
	// GOGC and GOMEMLIMIT are the environment variables' values ("" when
	// unset).
	GOGC, GOMEMLIMIT string
	// ContainerLimit is the container's memory limit in bytes; 0 when none
	// is known.
	ContainerLimit int64
}

// Validate says whether setting is one --gogc takes: "auto", "off" or a
// percentage of at least minPercent.
func Validate(setting string) error {
	_, err := parse(setting)
	return err
}

func parse(setting string) (percent int, err error) {
	switch setting {
	case Auto:
		return 0, nil
	case "off":
		return -1, nil
	}
	n, err := strconv.Atoi(setting)
	if err != nil || n < minPercent {
		return 0, fmt.Errorf("--gogc %q: want auto, off, or a percentage of at least %d", setting, minPercent)
	}
	return n, nil
}

// Choose decides the target for setting in env. A GOGC in the environment
// is kept whatever the setting; an explicit --gogc is taken as it is; auto
// chooses Bounded when GOMEMLIMIT or a container limit bounds the heap
// (setting, for the container, a soft limit of four fifths of it), and
// Unbounded otherwise.
func Choose(setting string, env Environment) (Decision, error) {
	percent, err := parse(setting)
	if err != nil {
		return Decision{}, err
	}
	if env.GOGC != "" {
		return Decision{Kept: true, Source: "GOGC", Reason: "GOGC=" + env.GOGC + " is set in the environment, and kept"}, nil
	}
	if setting != Auto {
		return Decision{Percent: percent, Source: "--gogc", Reason: "--gogc " + setting}, nil
	}
	switch {
	case env.GOMEMLIMIT != "":
		return Decision{Percent: Bounded, Source: "auto", Reason: "GOMEMLIMIT=" + env.GOMEMLIMIT + " bounds the heap"}, nil
	case env.ContainerLimit > 0:
		limit := softLimit(env.ContainerLimit)
		return Decision{Percent: Bounded, MemoryLimit: limit, setLimit: true, Source: "auto",
			Reason: fmt.Sprintf("the container's memory limit (%d MiB) bounds the heap; soft limit %d MiB", env.ContainerLimit>>20, limit>>20)}, nil
	}
	return Decision{Percent: Unbounded, Source: "auto", Reason: "no memory limit is known (set GOMEMLIMIT to allow more)"}, nil
}

// Apply sets the decision on the runtime and returns it with the
// percentage and memory limit now in effect.
func Apply(d Decision) Decision {
	if d.Kept {
		// Read back without changing it.
		d.Percent = debug.SetGCPercent(100)
		debug.SetGCPercent(d.Percent)
	} else {
		debug.SetGCPercent(d.Percent)
	}
	if d.setLimit {
		debug.SetMemoryLimit(d.MemoryLimit)
	}
	if limit := debug.SetMemoryLimit(-1); limit != math.MaxInt64 {
		d.MemoryLimit = limit
	}
	return d
}

// FromProcess is the environment of this process: its GOGC and GOMEMLIMIT,
// and the memory limit of its cgroup (v2, then v1).
func FromProcess() Environment {
	return Environment{
		GOGC:           os.Getenv("GOGC"),
		GOMEMLIMIT:     os.Getenv("GOMEMLIMIT"),
		ContainerLimit: cgroupLimit(),
	}
}

// unlimitedV1 is what cgroup v1 reports for no limit: a page-rounded
// maximum, far beyond any machine.
const unlimitedV1 = 1 << 60

func cgroupLimit() int64 {
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		data, err := os.ReadFile(path)
		if err != nil { // not this cgroup version, or no cgroup
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil || n <= 0 || n >= unlimitedV1 { // "max", or v1's unlimited
			return 0
		}
		return n
	}
	return 0
}
