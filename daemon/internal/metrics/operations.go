package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/garm-dev/garm/daemon/internal/keyset"
)

// The names of the series about what garmd depends on: the bus,
// JetStream, the spent-grant store, the audit sink, the key sets and the
// catalogue's store.
const (
	BusConnectedName       = "garm_bus_connected"
	BusReconnectsName      = "garm_bus_reconnects_total"
	PublishesName          = "garm_jetstream_publishes_total"
	GrantSpendsName        = "garm_grant_spends_total"
	AuditWriteFailuresName = "garm_audit_write_failures_total"
	KeySetAgeName          = "garm_key_set_age_seconds"
	KeySetFetchesName      = "garm_key_set_fetches_total"
	CatalogueReloadsName   = "garm_catalogue_reloads_total"
)

// Stream is what a JetStream publish was for, the stream label of
// PublishesName: a role, not a stream's name, so that the label set is
// fixed by the build whatever the operator calls things.
type Stream uint8

// The streams garmd publishes to.
const (
	StreamLedger Stream = iota
	StreamAudit
	StreamNotify
	StreamGrantsSpent
	// StreamOther is a publish to none of the above; there should be none.
	StreamOther
	numStreams
)

var streamLabels = [numStreams]string{"ledger", "audit", "notify", "grants_spent", "other"}

// PublishResult is how a JetStream publish ended, the result label of
// PublishesName.
type PublishResult uint8

// The results of a publish.
const (
	// PublishOK: the stream acknowledged it.
	PublishOK PublishResult = iota
	// PublishRefused: the stream answered with an error (a full stream, a
	// wrong expected sequence — an already spent grant is one).
	PublishRefused
	// PublishTimeout: no answer in time. The message may or may not be
	// stored: the outcome is unknown, not failed.
	PublishTimeout
	// PublishError: no stream could be asked (no responders, no
	// connection).
	PublishError
	numPublishResults
)

var publishLabels = [numPublishResults]string{"ok", "refused", "timeout", "error"}

// SpendResult is how spending an approval grant ended, the result label of
// GrantSpendsName.
type SpendResult uint8

// The results of a spend.
const (
	SpendSpent SpendResult = iota
	SpendAlreadySpent
	// SpendUnavailable: the store did not say; the call was refused.
	SpendUnavailable
	numSpendResults
)

var spendLabels = [numSpendResults]string{"spent", "already_spent", "unavailable"}

// ReloadResult is what one poll of the catalogue's store that found a
// change, or could not ask, came to: the result label of
// CatalogueReloadsName.
type ReloadResult uint8

// The results of a reload.
const (
	// ReloadSwapped: a new generation is serving.
	ReloadSwapped ReloadResult = iota
	// ReloadRefused: a new artifact did not load or mount; the serving
	// generation stays. Counted once per artifact, not per poll.
	ReloadRefused
	// ReloadUnreachable: the store did not answer a poll.
	ReloadUnreachable
	numReloadResults
)

var reloadLabels = [numReloadResults]string{"swapped", "refused", "unreachable"}

// Operations are the counters of garmd's dependencies, incremented by
// whoever sees the event and read at scrape time. Every method is a single
// atomic add: no lock, no allocation. The zero value is ready to use.
type Operations struct {
	publishes          [numStreams][numPublishResults]atomic.Uint64
	spends             [numSpendResults]atomic.Uint64
	auditWriteFailures atomic.Uint64
	reloads            [numReloadResults]atomic.Uint64
}

// CountPublish counts one JetStream publish to s that ended with r. A value
// outside the constants counts as StreamOther or PublishError.
func (o *Operations) CountPublish(s Stream, r PublishResult) {
	o.publishes[min(s, StreamOther)][min(r, PublishError)].Add(1)
}

// CountSpend counts one grant spend that ended with r; a value outside the
// constants counts as SpendUnavailable.
func (o *Operations) CountSpend(r SpendResult) {
	o.spends[min(r, SpendUnavailable)].Add(1)
}

// CountAuditWriteFailure counts one audit row the sink did not accept.
func (o *Operations) CountAuditWriteFailure() { o.auditWriteFailures.Add(1) }

// CountReload counts one reload that ended with r; a value outside the
// constants counts as ReloadUnreachable.
func (o *Operations) CountReload(r ReloadResult) {
	o.reloads[min(r, ReloadUnreachable)].Add(1)
}

// KeySet is one key set garmd verifies with, for KeySetAgeName and
// KeySetFetchesName.
type KeySet struct {
	// Issuer is the issuer whose keys these are.
	Issuer string
	// Use is what the keys verify: "token" (step 1) or "grant" (step 5).
	Use   string
	Stats keyset.Stats
}

func operations(o *Operations) []prometheus.Collector {
	read := func(c *atomic.Uint64) func() float64 {
		return func() float64 { return float64(c.Load()) }
	}
	if o == nil {
		o = new(Operations)
	}
	var out []prometheus.Collector
	for s := range numStreams {
		for r := range numPublishResults {
			out = append(out, prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name:        PublishesName,
				Help:        "JetStream publishes garmd made, by what they were for (stream: ledger, audit, notify, grants_spent) and how they ended (result: ok; refused by the stream; timeout, outcome unknown; error, no stream asked).",
				ConstLabels: prometheus.Labels{"stream": streamLabels[s], "result": publishLabels[r]},
			}, read(&o.publishes[s][r])))
		}
	}
	for r := range numSpendResults {
		out = append(out, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        GrantSpendsName,
			Help:        "Approval grants garmd tried to spend, by result: spent, already_spent, or unavailable (the store did not say, and the call was refused).",
			ConstLabels: prometheus.Labels{"result": spendLabels[r]},
		}, read(&o.spends[r])))
	}
	out = append(out, prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: AuditWriteFailuresName,
		Help: "Audit rows (intent or outcome) the audit sink did not accept; a fail-closed tool's call is refused when its intent is one.",
	}, read(&o.auditWriteFailures)))
	for r := range numReloadResults {
		out = append(out, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        CatalogueReloadsName,
			Help:        "Catalogue reloads, by result: swapped (a new generation serves), refused (a new artifact did not load or mount, counted once per artifact), unreachable (the store did not answer a poll).",
			ConstLabels: prometheus.Labels{"result": reloadLabels[r]},
		}, read(&o.reloads[r])))
	}
	return out
}

func bus(f func() (connected bool, reconnects uint64)) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: BusConnectedName,
			Help: "1 while garmd is connected to the bus, 0 while it is reconnecting.",
		}, func() float64 {
			if f == nil {
				return 0
			}
			if connected, _ := f(); connected {
				return 1
			}
			return 0
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: BusReconnectsName,
			Help: "Times garmd's bus connection was lost and made again.",
		}, func() float64 {
			if f == nil {
				return 0
			}
			_, n := f()
			return float64(n)
		}),
	}
}

// keySets is a collector rather than series registered once because the
// key sets are read as a list at scrape time.
type keySets struct {
	list    func() []KeySet
	age     *prometheus.Desc
	fetches *prometheus.Desc
}

func newKeySets(list func() []KeySet) *keySets {
	return &keySets{
		list: list,
		age: prometheus.NewDesc(KeySetAgeName,
			"Seconds since the key set serving was fetched, by issuer and use (token or grant); absent before the first fetch succeeds. Past the key-set TTL (design 7.5) its signatures are refused.",
			[]string{"issuer", "use"}, nil),
		fetches: prometheus.NewDesc(KeySetFetchesName,
			"Key-set fetches that finished, by issuer, use (token or grant) and result (ok or failed).",
			[]string{"issuer", "use", "result"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (k *keySets) Describe(ch chan<- *prometheus.Desc) {
	ch <- k.age
	ch <- k.fetches
}

// Collect implements prometheus.Collector.
func (k *keySets) Collect(ch chan<- prometheus.Metric) {
	if k.list == nil {
		return
	}
	for _, s := range k.list() {
		if s.Stats.Fetched {
			ch <- prometheus.MustNewConstMetric(k.age, prometheus.GaugeValue, s.Stats.Age.Seconds(), s.Issuer, s.Use)
		}
		ch <- prometheus.MustNewConstMetric(k.fetches, prometheus.CounterValue, float64(s.Stats.FetchesOK), s.Issuer, s.Use, "ok")
		ch <- prometheus.MustNewConstMetric(k.fetches, prometheus.CounterValue, float64(s.Stats.FetchesFailed), s.Issuer, s.Use, "failed")
	}
}
