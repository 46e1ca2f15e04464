package metrics

import "github.com/prometheus/client_golang/prometheus"

// The names of the series an operator is woken by that are states, not
// counts of what garmd did: whether it is ready, whether JetStream has a
// quorum for what its tools need, and the trace spans it could not export.
const (
	ReadyName        = "garm_ready"
	QuorumLostName   = "garm_jetstream_quorum_lost"
	SpansDroppedName = "garm_spans_dropped_total"
)

// health are the series of readiness, quorum and dropped spans, each read
// from its source at scrape time; a missing source reads as its safe zero
// (not ready, no stream lost, nothing dropped).
func health(ready func() bool, quorumLost func() int, spansDropped func() uint64) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: ReadyName,
			Help: "1 while /readyz answers 200 (a catalogue generation serves, the bus is connected, garmd is not shutting down), else 0.",
		}, func() float64 {
			if ready != nil && ready() {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: QuorumLostName,
			Help: "How many of the JetStream streams the mounted tools need had no leader at the last poll (every 2s): 0 while each has its quorum. /readyz says degraded, naming them, while it is not 0.",
		}, func() float64 {
			if quorumLost == nil {
				return 0
			}
			return float64(quorumLost())
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: SpansDroppedName,
			Help: "Sampled trace spans garmd's exporter dropped: its queue was full, or an export failed. 0 without an OTLP exporter.",
		}, func() float64 {
			if spansDropped == nil {
				return 0
			}
			return float64(spansDropped())
		}),
	}
}
