package rows_test

import (
	"testing"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/ledger/ledgertest"
	"github.com/garm-dev/garm/ledger/merkle"
	"github.com/garm-dev/garm/ledger/rows"
	"google.golang.org/protobuf/proto"
)

// BenchmarkSealingARow is the sealer's work per row on one goroutine: the
// row decoded from its Batch message, re-encoded deterministically,
// hashed, and appended to the tree (issue 35 asks for ≥ 20,000 rows/s).
func BenchmarkSealingARow(b *testing.B) {
	batch := &ledgerv1.Batch{}
	for i := range 256 {
		batch.Events = append(batch.Events, ledgertest.Event(i))
	}
	data, err := proto.Marshal(batch)
	if err != nil {
		b.Fatal(err)
	}
	var d rows.Decoder
	var tree merkle.Tree
	add := func(r rows.Row) error { tree.Append(r.Leaf); return nil }
	n := 0
	for b.Loop() {
		if err := d.Batch(uint64(n+1), data, add); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n*256)/b.Elapsed().Seconds(), "rows/s")
}

func TestTheLeafDoesNotDependOnTheEncoderThatWroteTheRow(t *testing.T) {
	t.Parallel()
	e := ledgertest.Event(7)
	var leaves []merkle.Hash
	for range 20 {
		data, err := proto.Marshal(&ledgerv1.Batch{Events: []*ledgerv1.Event{e}})
		if err != nil {
			t.Fatal(err)
		}
		var d rows.Decoder
		if err := d.Batch(1, data, func(r rows.Row) error { leaves = append(leaves, r.Leaf); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	canon, _ := rows.Canonical(e)
	for _, l := range leaves {
		if l != merkle.LeafHash(canon) {
			t.Fatal("a row's leaf changed with its encoding's map order")
		}
	}
}
