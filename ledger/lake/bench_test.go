package lake

import (
	"testing"

	"github.com/garm-dev/garm/ledger/rows"
)

// BenchmarkEncodingAFileOfRows is the exporter's own cost per row: a
// decoded row to a record, and records to a Parquet file (the bus and the
// store are not in it).
func BenchmarkEncodingAFileOfRows(b *testing.B) {
	const n = 10_000
	events := make([]rows.Row, n)
	for i := range events {
		events[i] = row(b, uint64(i/50+1), fullEvent(i))
	}
	b.ResetTimer()
	for range b.N {
		recs := make([]Record, n)
		for i := range events {
			recs[i] = FromRow(events[i])
		}
		if _, err := Encode(recs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
}
