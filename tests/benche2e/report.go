package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// measured is one target's figures in one round.
type measured struct {
	serial, loaded loadResult
	// cpuPerCall is the front end's CPU per call at load, in µs; 0 when
	// the target has no front end.
	cpuPerCall float64
	// serialCPUPerCall is the same with one caller: with the front end
	// idle between calls, it includes what waking up for each call costs.
	serialCPUPerCall float64
	// busCPUPerCall and toolCPUPerCall are nats-server's and the tool's
	// CPU per call at load, in µs.
	busCPUPerCall, toolCPUPerCall float64
}

// round is every target measured once, with the machine's load when the
// round began.
type round struct {
	loadavg string
	by      map[string]measured
}

// runRounds measures every target once per round, rotating the order, so
// no target always runs first (or last) on a machine whose load drifts.
func runRounds(ctx context.Context, o options, p *plane, targets []target) ([]round, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var rounds []round
	for i := range o.rounds {
		r := round{loadavg: loadavg(), by: map[string]measured{}}
		for j := range targets {
			t := targets[(i+j)%len(targets)]
			m, err := measureTarget(ctx, o, self, t)
			if err != nil {
				return rounds, fmt.Errorf("round %d, %s: %w", i+1, t.name, err)
			}
			r.by[t.name] = m
		}
		rounds = append(rounds, r)
		fmt.Fprintf(os.Stderr, "benche2e: round %d of %d done\n", i+1, o.rounds)
	}
	return rounds, nil
}

func measureTarget(ctx context.Context, o options, self string, t target) (measured, error) {
	var m measured
	phase := []string{"--warmup", o.warmup.String(), "--duration", o.phase.String()}
	var before time.Duration
	if t.front != nil {
		before = cpuTime(t.front.pid())
	}
	serial, err := runLoadProcess(ctx, self, slices.Concat(t.args, phase, []string{"--callers", "1"}))
	if err != nil {
		return m, err
	}
	if t.front != nil {
		m.serialCPUPerCall = perCall(cpuTime(t.front.pid())-before, serial, o)
		before = cpuTime(t.front.pid())
	}
	busBefore, toolBefore := cpuTime(t.bus.pid()), cpuTime(t.tool.pid())
	loaded, err := runLoadProcess(ctx, self, slices.Concat(t.args, phase, []string{"--callers", strconv.Itoa(o.callers)}))
	if err != nil {
		return m, err
	}
	m.serial, m.loaded = serial, loaded
	m.busCPUPerCall = perCall(cpuTime(t.bus.pid())-busBefore, loaded, o)
	m.toolCPUPerCall = perCall(cpuTime(t.tool.pid())-toolBefore, loaded, o)
	if t.front != nil {
		// The front end's CPU over the whole load process, warm-up
		// included, per call made in it (counted calls scaled by the
		// window's share of the process's time).
		m.cpuPerCall = perCall(cpuTime(t.front.pid())-before, loaded, o)
	}
	return m, nil
}

// perCall is spent, the front end's CPU over one load process (warm-up
// included), per call made in it: the counted calls scaled by the
// window's share of the process's time.
func perCall(spent time.Duration, r loadResult, o options) float64 {
	calls := r.PerSecond * (o.phase + o.warmup).Seconds()
	if calls == 0 {
		return 0
	}
	return float64(spent.Microseconds()) / calls
}

// cpuTime is the user and system CPU the process has used, from
// /proc/<pid>/stat (utime and stime, in clock ticks of USER_HZ, 100 on
// Linux); 0 where there is no /proc.
func cpuTime(pid int) time.Duration {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * (time.Second / 100)
}

func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

func header(o options, p *plane) string {
	return fmt.Sprintf(`garm bench-e2e: POST %s, each target in processes of its own on loopback
  direct      NATS request straight to calcd                     (the ceiling)
  bridge      bare net/http → NATS bridge, no policy, proto body  (the floor of any HTTP front end)
  garmd       garmd, ledger stream on, JSON body                  (what an agent sends)
  garmd-proto garmd, same call with the bridge's binary body
  compare     with --compare: another garmd build, JSON body (e.g. before a change, garmd after it)
  %d rounds; each measures every target (order rotated per round): 1 caller, then %d callers, %s counted after %s warm-up
  machine: %d CPUs, loadavg %s at start; garmd %s (pid %d), bridge pid %d, its env %v; garmd env %v%s
`, route, o.rounds, o.callers, o.phase, o.warmup, runtime.NumCPU(), loadavg(), o.garmd, p.garmdP.pid(), p.bridgeP.pid(), []string(o.bridgeEnv), []string(o.garmdEnv), compared(o))
}

// ratio is one figure of a round, and how the table names it.
type ratio struct {
	name, unit, goal string
	of               func(r round) (float64, bool)
}

func ratios(callers int) []ratio {
	// of pairs two targets' figures of one round, present in both.
	of := func(combine func(x, y measured) float64) func(a, b string) func(round) (float64, bool) {
		return func(a, b string) func(round) (float64, bool) {
			return func(r round) (float64, bool) {
				x, okx := r.by[a]
				y, oky := r.by[b]
				return combine(x, y), okx && oky
			}
		}
	}
	minus := func(figure func(measured) float64) func(a, b string) func(round) (float64, bool) {
		return of(func(x, y measured) float64 { return figure(x) - figure(y) })
	}
	tput := of(func(x, y measured) float64 { return x.loaded.PerSecond / y.loaded.PerSecond })
	added := minus(func(m measured) float64 { return m.serial.P50us })
	cpu := minus(func(m measured) float64 { return m.cpuPerCall })
	busCPU := minus(func(m measured) float64 { return m.busCPUPerCall })
	toolCPU := minus(func(m measured) float64 { return m.toolCPUPerCall })
	serialCPU := minus(func(m measured) float64 { return m.serialCPUPerCall })
	c := strconv.Itoa(callers)
	return []ratio{
		{"garmd / bridge throughput, " + c + " callers", "", "≥ 0.90", tput("garmd", "bridge")},
		{"garmd − bridge p50, 1 caller", "µs", "≤ +30", added("garmd", "bridge")},
		{"garmd / direct throughput, " + c + " callers", "", "≥ 0.40 (design 9)", tput("garmd", "direct")},
		{"bridge / direct throughput, " + c + " callers", "", "", tput("bridge", "direct")},
		{"garmd − direct p50, 1 caller", "µs", "≤ +100 (design 9)", added("garmd", "direct")},
		{"garmd − bridge CPU per call, " + c + " callers", "µs", "", cpu("garmd", "bridge")},
		{"garmd − bridge CPU per call, 1 caller", "µs", "", serialCPU("garmd", "bridge")},
		{"garmd − bridge nats-server CPU per call, " + c + " callers", "µs", "", busCPU("garmd", "bridge")},
		{"garmd − bridge tool CPU per call, " + c + " callers", "µs", "", toolCPU("garmd", "bridge")},
		{"garmd-proto / bridge throughput, " + c + " callers", "", "", tput("garmd-proto", "bridge")},
		{"garmd-proto − bridge p50, 1 caller", "µs", "", added("garmd-proto", "bridge")},
		{"garmd / compare throughput, " + c + " callers", "", "", tput("garmd", "compare")},
		{"garmd − compare p50, 1 caller", "µs", "", added("garmd", "compare")},
		{"garmd − compare CPU per call, " + c + " callers", "µs", "", cpu("garmd", "compare")},
		{"compare / bridge throughput, " + c + " callers", "", "", tput("compare", "bridge")},
		{"compare − bridge p50, 1 caller", "µs", "", added("compare", "bridge")},
	}
}

func table(rounds []round, o options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nper round: calls/s with %d callers, p50 and p99 with 1 caller, the front end's, nats-server's and the tool's CPU per call with %d callers; calls/s and the front end's CPU per call with 1\n", o.callers, o.callers)
	names := targetNames(rounds)
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(w, "round\tloadavg\ttarget\tcalls/s\tp50 µs\tp99 µs\tcpu µs/call\tnats-server µs/call\ttool µs/call\tcalls/s, 1 caller\tcpu µs/call, 1 caller\t\n")
	for i, r := range rounds {
		for j, n := range names {
			m := r.by[n]
			label, load := "", ""
			if j == 0 {
				label, load = strconv.Itoa(i+1), r.loadavg
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%.0f\t%.0f\t%.0f\t%s\t%s\t%s\t%.0f\t%s\t\n", label, load, n, m.loaded.PerSecond, m.serial.P50us, m.serial.P99us, orDash(m.cpuPerCall), orDash(m.busCPUPerCall), orDash(m.toolCPUPerCall), m.serial.PerSecond, orDash(m.serialCPUPerCall))
		}
	}
	w.Flush()

	fmt.Fprintln(&b, "\nratios, paired within each round:")
	w = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprint(w, "figure\tmedian (min–max)\tgoal\tper round\n")
	for _, rt := range ratios(o.callers) {
		var vals []float64
		for _, r := range rounds {
			if v, ok := rt.of(r); ok {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			continue
		}
		per := make([]string, len(vals))
		for i, v := range vals {
			per[i] = format(v, rt.unit)
		}
		sorted := slices.Sorted(slices.Values(vals))
		fmt.Fprintf(w, "%s\t%s (%s–%s)\t%s\t%s\n", rt.name, format(median(sorted), rt.unit),
			format(sorted[0], rt.unit), format(sorted[len(sorted)-1], rt.unit), rt.goal, strings.Join(per, " "))
	}
	w.Flush()
	fmt.Fprintf(&b, "\nloadavg at the end: %s (on a shared machine, trust the paired ratios over the absolute figures)\n", loadavg())
	return b.String()
}

func targetNames(rounds []round) []string {
	var names []string
	for _, n := range []string{"direct", "bridge", "garmd", "garmd-proto", "compare"} {
		if _, ok := rounds[0].by[n]; ok {
			names = append(names, n)
		}
	}
	return names
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func format(v float64, unit string) string {
	if unit == "µs" {
		return fmt.Sprintf("%+.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func orDash(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", v)
}

func compared(o options) string {
	if o.compare == "" {
		return ""
	}
	return fmt.Sprintf("; compare %s %v, its env %v", o.compare, []string(o.compareArgs), append(slices.Clone(o.garmdEnv), o.compareEnv...))
}
