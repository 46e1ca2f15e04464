package metrics

import "github.com/prometheus/client_golang/prometheus"

// Gatherer exposes the registry to the black-box tests, so they can compare
// exact series with testutil without going through HTTP every time.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.registry }
