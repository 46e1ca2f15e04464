package metrics

import (
	"net/http"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/garm-dev/garm/daemon/internal/ledger"
)

// The names of garmd's own series.
const (
	CallsName         = "garm_calls_total"
	CallDurationName  = "garm_call_duration_seconds"
	LedgerRowsName    = "garm_ledger_rows_total"
	TokenCacheName    = "garm_token_cache_lookups_total"
	NotificationsName = "garm_notifications_total"
	CatalogueInfoName = "garm_catalogue_info"
	BuildInfoName     = "garm_build_info"
	InFlightName      = "garm_calls_in_flight"
	// LimitRefusalsName counts calls a limit refused, by tool and limit.
	LimitRefusalsName = "garm_limit_refusals_total"
)

// latencyBuckets spans garmd's own overhead on a refused call (tens of
// microseconds) up to the default tool timeout of design 7.1, roughly two
// buckets a decade, so a per-tool histogram stays affordable.
var latencyBuckets = []float64{
	0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30,
}

// scrapesInFlight bounds concurrent scrapes: gathering walks every series,
// and the admin listener is not a place to spend garmd's CPU on.
const scrapesInFlight = 4

// Sources are counters kept elsewhere that metrics reads at scrape time.
// Either may be nil: its series then read 0.
type Sources struct {
	// Ledger is the recorder's counts of rows recorded, fallen back and lost.
	Ledger *ledger.Counts
	// TokenCache reports the verified-token cache's hits and misses so far.
	TokenCache func() (hits, misses uint64)
	// Notifications reports step 10's rows published, failed and dropped
	// so far; nil when notify is off.
	Notifications func() (published, failed, dropped uint64)
	// InFlight reports the calls the tool plane is reading or running now.
	InFlight func() int
	// Operations are the counters of garmd's dependencies (JetStream
	// publishes, grant spends, audit failures, reloads).
	Operations *Operations
	// Bus reports whether the bus connection is up and how many times it
	// was made again.
	Bus func() (connected bool, reconnects uint64)
	// KeySets lists the key sets garmd verifies tokens and grants with.
	KeySets func() []KeySet
	// Ready reports whether /readyz answers 200.
	Ready func() bool
	// QuorumLost reports how many streams the mounted tools need had no
	// leader at the quorum watch's last poll.
	QuorumLost func() int
	// SpansDropped reports the trace spans the exporter dropped so far; nil
	// without garmd's own exporter.
	SpansDropped func() uint64
}

// Metrics is garmd's registry and the series on it. It is safe for
// concurrent use; the zero value is not usable, use New.
type Metrics struct {
	registry  *prometheus.Registry
	calls     *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	limits    *prometheus.CounterVec
	catalogue *catalogueInfo
	handler   http.Handler

	// series caches the resolved children of calls and latency per
	// (tool, outcome, code): seriesKey → *callSeries.
	series sync.Map
}

// New builds the registry with every series registered. version is garmd's
// build version, exposed as BuildInfoName's version label.
func New(version string, s Sources) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: CallsName,
			Help: "Calls garmd answered, by tool FQN (\"-\" when no visible tool was resolved), outcome (ok, denied, error) and wire code (empty when ok).",
		}, []string{"tool", "outcome", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    CallDurationName,
			Help:    "Time garmd spent answering a call, from its arrival to its answer, by tool FQN (\"-\" when no visible tool was resolved) and outcome.",
			Buckets: latencyBuckets,
		}, []string{"tool", "outcome"}),
		limits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: LimitRefusalsName,
			Help: "Calls a limit refused (rate_limited or limit_unavailable), by tool FQN and the limit's id.",
		}, []string{"tool", "limit"}),
		catalogue: newCatalogueInfo(),
	}
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        BuildInfoName,
		Help:        "Always 1; version is the running garmd's build version.",
		ConstLabels: prometheus.Labels{"version": strings.ToValidUTF8(version, "\uFFFD")},
	})
	build.Set(1)

	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.calls,
		m.latency,
		m.limits,
		m.catalogue,
		build,
	)
	m.registry.MustRegister(ledgerRows(s.Ledger)...)
	m.registry.MustRegister(tokenCache(s.TokenCache)...)
	m.registry.MustRegister(inFlight(s.InFlight))
	m.registry.MustRegister(operations(s.Operations)...)
	m.registry.MustRegister(bus(s.Bus)...)
	m.registry.MustRegister(newKeySets(s.KeySets))
	m.registry.MustRegister(health(s.Ready, s.QuorumLost, s.SpansDropped)...)
	if s.Notifications != nil {
		m.registry.MustRegister(notifications(s.Notifications)...)
	}

	m.handler = promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		MaxRequestsInFlight: scrapesInFlight,
		// Exemplars (a latency's trace id) are exposed in OpenMetrics only,
		// to a scraper that asks for it.
		EnableOpenMetrics: true,
	})
	return m
}

// LimitRefused counts a call the limit id of tool refused. Both labels are
// catalogue text: a caller cannot mint series.
func (m *Metrics) LimitRefused(tool, limit string) {
	m.limits.WithLabelValues(tool, limit).Inc()
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler { return m.handler }

func ledgerRows(c *ledger.Counts) []prometheus.Collector {
	const help = "Ledger rows by what the recorder did with them: recorded where they were meant to go, fell_back to the log line, or lost."
	read := func(pick func(*ledger.Counts) uint64) func() float64 {
		return func() float64 {
			if c == nil {
				return 0
			}
			return float64(pick(c))
		}
	}
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: LedgerRowsName, Help: help, ConstLabels: prometheus.Labels{"result": "recorded"},
		}, read(func(c *ledger.Counts) uint64 { return c.Recorded.Load() })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: LedgerRowsName, Help: help, ConstLabels: prometheus.Labels{"result": "fell_back"},
		}, read(func(c *ledger.Counts) uint64 { return c.FellBack.Load() })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: LedgerRowsName, Help: help, ConstLabels: prometheus.Labels{"result": "lost"},
		}, read(func(c *ledger.Counts) uint64 { return c.Lost.Load() })),
	}
}

func tokenCache(counts func() (hits, misses uint64)) []prometheus.Collector {
	const help = "Lookups in the verified-token cache, by result (hit or miss)."
	read := func(hit bool) func() float64 {
		return func() float64 {
			if counts == nil {
				return 0
			}
			hits, misses := counts()
			if hit {
				return float64(hits)
			}
			return float64(misses)
		}
	}
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: TokenCacheName, Help: help, ConstLabels: prometheus.Labels{"result": "hit"},
		}, read(true)),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: TokenCacheName, Help: help, ConstLabels: prometheus.Labels{"result": "miss"},
		}, read(false)),
	}
}

func notifications(counts func() (published, failed, dropped uint64)) []prometheus.Collector {
	const help = "Rows of MODE_NOTIFY tools by what step 10 did with them: published to GARM_NOTIFY, failed to publish, or dropped (queue full, or garmd stopping)."
	read := func(pick int) func() float64 {
		return func() float64 {
			published, failed, dropped := counts()
			return float64([3]uint64{published, failed, dropped}[pick])
		}
	}
	out := make([]prometheus.Collector, 0, 3)
	for i, result := range []string{"published", "failed", "dropped"} {
		out = append(out, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: NotificationsName, Help: help, ConstLabels: prometheus.Labels{"result": result},
		}, read(i)))
	}
	return out
}

func inFlight(f func() int) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: InFlightName,
		Help: "Calls the tool plane is reading or running now; over --max-in-flight, calls are shed with 503.",
	}, func() float64 {
		if f == nil {
			return 0
		}
		return float64(f())
	})
}
