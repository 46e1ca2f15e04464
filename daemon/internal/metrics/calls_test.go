package metrics_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/metrics"
)

const callsHeader = `# HELP garm_calls_total Calls garmd answered, by tool FQN ("-" when no visible tool was resolved), outcome (ok, denied, error) and wire code (empty when ok).
# TYPE garm_calls_total counter
`

func assertSeries(t *testing.T, m *metrics.Metrics, want string, names ...string) {
	t.Helper()
	if err := testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
}

func TestACallIsCountedUnderItsToolOutcomeAndCode(t *testing.T) {
	m := metrics.New("test", metrics.Sources{})
	m.ObserveCall("payments.v1.initiate_payment", "ok", "", time.Millisecond)
	m.ObserveCall("payments.v1.initiate_payment", "ok", "", time.Millisecond)
	m.ObserveCall("payments.v1.initiate_payment", "denied", "grant_required", time.Millisecond)
	m.ObserveCall("payments.v1.initiate_payment", "error", "tool_refused", time.Millisecond)

	assertSeries(t, m, callsHeader+`
garm_calls_total{code="",outcome="ok",tool="payments.v1.initiate_payment"} 2
garm_calls_total{code="grant_required",outcome="denied",tool="payments.v1.initiate_payment"} 1
garm_calls_total{code="tool_refused",outcome="error",tool="payments.v1.initiate_payment"} 1
`, metrics.CallsName)
}

// The label sets are bounded whatever ObserveCall is handed: this is the
// table of what each kind of input becomes.
func TestLabelValuesAreFoldedOntoBoundedSets(t *testing.T) {
	cases := []struct {
		name                string
		tool, outcome, code string
		want                string
	}{
		{"a tool FQN is kept", "calc.v1.add", "ok", "", `{code="",outcome="ok",tool="calc.v1.add"}`},
		{"no tool is the dash", "", "denied", "unauthenticated", `{code="unauthenticated",outcome="denied",tool="-"}`},
		{"the dash stays the dash", "-", "denied", "not_found", `{code="not_found",outcome="denied",tool="-"}`},
		{"a request path is no tool", "/calc.v1.Calc/Add", "denied", "not_found", `{code="not_found",outcome="denied",tool="-"}`},
		{"invalid UTF-8 is no tool", "calc.v1.\xff", "error", "internal", `{code="internal",outcome="error",tool="-"}`},
		{"an ok call carries no code", "calc.v1.add", "ok", "not_found", `{code="",outcome="ok",tool="calc.v1.add"}`},
		{"an unknown outcome is an error", "calc.v1.add", "maybe", "unavailable", `{code="unavailable",outcome="error",tool="calc.v1.add"}`},
		{"an empty outcome is an error", "calc.v1.add", "", "", `{code="internal",outcome="error",tool="calc.v1.add"}`},
		{"a code outside the taxonomy is internal", "calc.v1.add", "denied", "teapot", `{code="internal",outcome="denied",tool="calc.v1.add"}`},
		{"a tool's own status is not a wire code", "calc.v1.add", "error", "409", `{code="internal",outcome="error",tool="calc.v1.add"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := metrics.New("test", metrics.Sources{})
			m.ObserveCall(c.tool, c.outcome, c.code, time.Millisecond)
			assertSeries(t, m, callsHeader+"garm_calls_total"+c.want+" 1\n", metrics.CallsName)
		})
	}
}

func TestEveryWireCodeOfTheTaxonomyIsKeptAsItIs(t *testing.T) {
	m := metrics.New("test", metrics.Sources{})
	seen := map[string]bool{}
	for c := range 256 {
		code := deny.Code(c).String()
		if !seen[code] {
			seen[code] = true
			m.ObserveCall("calc.v1.add", "error", code, time.Millisecond)
		}
	}
	var want strings.Builder
	want.WriteString(callsHeader)
	for code := range seen {
		want.WriteString(`garm_calls_total{code="` + code + `",outcome="error",tool="calc.v1.add"} 1` + "\n")
	}
	assertSeries(t, m, want.String(), metrics.CallsName)
	if len(seen) < 10 {
		t.Fatalf("the taxonomy spells %d wire codes, want at least the 10 of design 7.3", len(seen))
	}
}

func TestCallerChosenPathsAndCodesCannotMintSeries(t *testing.T) {
	m := metrics.New("test", metrics.Sources{})
	for i := range 1000 {
		n := strconv.Itoa(i)
		m.ObserveCall("/probe.v1.Svc/Method"+n, "denied", "not_found", time.Millisecond)
		m.ObserveCall("", "denied", "code_"+n, time.Millisecond)
	}
	assertSeries(t, m, callsHeader+`
garm_calls_total{code="internal",outcome="denied",tool="-"} 1000
garm_calls_total{code="not_found",outcome="denied",tool="-"} 1000
`, metrics.CallsName)
	if n := count(t, m, metrics.CallDurationName); n != 1 {
		t.Fatalf("%s has %d series, want 1", metrics.CallDurationName, n)
	}
}

func count(t *testing.T, m *metrics.Metrics, name string) int {
	t.Helper()
	n, err := testutil.GatherAndCount(m.Gatherer(), name)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestLatencyIsObservedInSecondsUnderToolAndOutcome(t *testing.T) {
	m := metrics.New("test", metrics.Sources{})
	m.ObserveCall("calc.v1.add", "ok", "", 250*time.Microsecond)
	m.ObserveCall("calc.v1.add", "ok", "", 2*time.Second)
	// Codes share the outcome's histogram: latency is not split by code.
	m.ObserveCall("calc.v1.add", "error", "unavailable", 40*time.Second)
	m.ObserveCall("calc.v1.add", "error", "deadline_exceeded", 40*time.Second)

	assertSeries(t, m, `# HELP garm_call_duration_seconds Time garmd spent answering a call, from its arrival to its answer, by tool FQN ("-" when no visible tool was resolved) and outcome.
# TYPE garm_call_duration_seconds histogram
garm_call_duration_seconds_bucket{outcome="error",tool="calc.v1.add",le="0.0001"} 0
garm_call_duration_seconds_bucket{outcome="error",tool="calc.v1.add",le="0.0005"} 0
garm_call_duration_seconds_bucket{outcome="error",tool="calc.v1.add",le="0.001"} 0
garm_call_duration_seconds_bucket{outcome="error",tool="calc.v1.add",le="0.005"} 0
garm_call_duration_seconds_bucket{outcome="error",tool="calc.v1.add",le="0.01"} 0
garm_call_duration_seconds_bucket{outcome="error",tool="calc.v1.add",le="0.05"} 0
garm_call_duration_seconds_bucket{outcome="error",tool="calc.v1.add",le="0.1"} 0
garm_call_duration_seconds_bucket{outcome="error",tool="calc.v1.add",le="0.5"} 0
garm_call_duration_seconds_bucket{outcome="error",tool="calc.v1.add",le="1"} 0
garm_call_duration_seconds_bucket{outcome="error",tool="calc.v1.add",le="5"} 0
garm_call_duration_seconds_bucket{outcome="error",tool="calc.v1.add",le="10"} 0
garm_call_duration_seconds_bucket{outcome="error",tool="calc.v1.add",le="30"} 0
garm_call_duration_seconds_bucket{outcome="error",tool="calc.v1.add",le="+Inf"} 2
garm_call_duration_seconds_sum{outcome="error",tool="calc.v1.add"} 80
garm_call_duration_seconds_count{outcome="error",tool="calc.v1.add"} 2
garm_call_duration_seconds_bucket{outcome="ok",tool="calc.v1.add",le="0.0001"} 0
garm_call_duration_seconds_bucket{outcome="ok",tool="calc.v1.add",le="0.0005"} 1
garm_call_duration_seconds_bucket{outcome="ok",tool="calc.v1.add",le="0.001"} 1
garm_call_duration_seconds_bucket{outcome="ok",tool="calc.v1.add",le="0.005"} 1
garm_call_duration_seconds_bucket{outcome="ok",tool="calc.v1.add",le="0.01"} 1
garm_call_duration_seconds_bucket{outcome="ok",tool="calc.v1.add",le="0.05"} 1
garm_call_duration_seconds_bucket{outcome="ok",tool="calc.v1.add",le="0.1"} 1
garm_call_duration_seconds_bucket{outcome="ok",tool="calc.v1.add",le="0.5"} 1
garm_call_duration_seconds_bucket{outcome="ok",tool="calc.v1.add",le="1"} 1
garm_call_duration_seconds_bucket{outcome="ok",tool="calc.v1.add",le="5"} 2
garm_call_duration_seconds_bucket{outcome="ok",tool="calc.v1.add",le="10"} 2
garm_call_duration_seconds_bucket{outcome="ok",tool="calc.v1.add",le="30"} 2
garm_call_duration_seconds_bucket{outcome="ok",tool="calc.v1.add",le="+Inf"} 2
garm_call_duration_seconds_sum{outcome="ok",tool="calc.v1.add"} 2.00025
garm_call_duration_seconds_count{outcome="ok",tool="calc.v1.add"} 2
`, metrics.CallDurationName)
}

func TestANegativeDurationIsObservedAsZero(t *testing.T) {
	m := metrics.New("test", metrics.Sources{})
	m.ObserveCall("calc.v1.add", "ok", "", -time.Second)
	m.ObserveCall("calc.v1.add", "ok", "", 0)
	assertSeries(t, m, `# HELP garm_call_duration_seconds Time garmd spent answering a call, from its arrival to its answer, by tool FQN ("-" when no visible tool was resolved) and outcome.
# TYPE garm_call_duration_seconds histogram
`+histogramAllIn("calc.v1.add", "ok", 2), metrics.CallDurationName)
}

// histogramAllIn is the exposition of n observations of zero seconds.
func histogramAllIn(tool, outcome string, n int) string {
	var b strings.Builder
	labels := `outcome="` + outcome + `",tool="` + tool + `"`
	for _, le := range []string{"0.0001", "0.0005", "0.001", "0.005", "0.01", "0.05", "0.1", "0.5", "1", "5", "10", "30", "+Inf"} {
		b.WriteString("garm_call_duration_seconds_bucket{" + labels + `,le="` + le + `"} ` + strconv.Itoa(n) + "\n")
	}
	b.WriteString("garm_call_duration_seconds_sum{" + labels + "} 0\n")
	b.WriteString("garm_call_duration_seconds_count{" + labels + "} " + strconv.Itoa(n) + "\n")
	return b.String()
}

func TestCallsObservedConcurrentlyAreAllCounted(t *testing.T) {
	m := metrics.New("test", metrics.Sources{})
	const workers, each = 8, 500
	tools := []string{"calc.v1.add", "calc.v1.sub", "", "/not/a/tool"}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				m.ObserveCall(tools[(w+i)%len(tools)], "ok", "", time.Millisecond)
			}
		})
	}
	wg.Wait()
	assertSeries(t, m, callsHeader+`
garm_calls_total{code="",outcome="ok",tool="-"} 2000
garm_calls_total{code="",outcome="ok",tool="calc.v1.add"} 1000
garm_calls_total{code="",outcome="ok",tool="calc.v1.sub"} 1000
`, metrics.CallsName)
}

func TestObservingACallWhoseSeriesExistDoesNotAllocate(t *testing.T) {
	m := metrics.New("test", metrics.Sources{})
	m.ObserveCall("calc.v1.add", "denied", "permission_denied", time.Millisecond)
	m.ObserveCall("/calc.v1.Calc/Nope", "denied", "not_found", time.Millisecond)
	allocs := testing.AllocsPerRun(1000, func() {
		m.ObserveCall("calc.v1.add", "denied", "permission_denied", time.Millisecond)
		m.ObserveCall("/calc.v1.Calc/Nope", "denied", "not_found", time.Millisecond)
	})
	if allocs != 0 {
		t.Fatalf("ObserveCall allocates %.1f times per call pair, want 0", allocs)
	}
}

// A limit's refusals are counted by tool and limit id.
func TestLimitRefusalsAreCountedByToolAndLimit(t *testing.T) {
	m := metrics.New("test", metrics.Sources{})
	m.LimitRefused("t.v1.pay", "per_person")
	m.LimitRefused("t.v1.pay", "per_person")
	want := `# HELP garm_limit_refusals_total Calls a limit refused (rate_limited or limit_unavailable), by tool FQN and the limit's id.
# TYPE garm_limit_refusals_total counter
garm_limit_refusals_total{limit="per_person",tool="t.v1.pay"} 2
`
	if err := testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(want), metrics.LimitRefusalsName); err != nil {
		t.Fatal(err)
	}
}
