package metrics

import (
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// SetCatalogue names the catalogue generation now serving. The series it
// replaces disappears in the same step: every scrape sees exactly one
// generation, never none and never two. Before the first call there is no
// series at all, as no generation is serving.
func (m *Metrics) SetCatalogue(digest, producer string) {
	m.catalogue.set(digest, producer)
}

// catalogueInfo is a collector rather than a GaugeVec because a vector can
// only be replaced in two steps (Reset, then Set), and a scrape between them
// would see no generation.
type catalogueInfo struct {
	desc    *prometheus.Desc
	current atomic.Pointer[prometheus.Metric]
}

func newCatalogueInfo() *catalogueInfo {
	return &catalogueInfo{desc: prometheus.NewDesc(
		CatalogueInfoName,
		"Always 1; digest and producer name the catalogue generation serving calls.",
		[]string{"digest", "producer"}, nil,
	)}
}

func (c *catalogueInfo) set(digest, producer string) {
	metric := prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 1,
		strings.ToValidUTF8(digest, "\uFFFD"), strings.ToValidUTF8(producer, "\uFFFD"))
	c.current.Store(&metric)
}

// Describe implements prometheus.Collector.
func (c *catalogueInfo) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *catalogueInfo) Collect(ch chan<- prometheus.Metric) {
	if metric := c.current.Load(); metric != nil {
		ch <- *metric
	}
}
