package lake

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/garm-dev/garm/ledger/rows"
)

// putRange stores rows first..last (one row per message) as one range.
func putRange(t *testing.T, d Dir, first, last uint64, objects bool) {
	t.Helper()
	var recs []Record
	for seq := first; seq <= last; seq++ {
		recs = append(recs, FromRow(row(t, seq, fullEvent(int(seq)))))
	}
	key := ObjectKey(recs[0].Partition(), first, last)
	m, _ := json.Marshal(Manifest{First: first, Last: last, Rows: len(recs), Objects: []string{key}})
	if err := d.Put(context.Background(), manifestKey(first, last), m); err != nil {
		t.Fatal(err)
	}
	if objects {
		if err := d.Put(context.Background(), key, mustEncode(t, recs)); err != nil {
			t.Fatal(err)
		}
	}
}

func count(t *testing.T, d Dir) (int, error) {
	t.Helper()
	n := 0
	err := Scan(context.Background(), d, func(rows.Row) error { n++; return nil })
	return n, err
}

func TestTheLastRangeIsNotReadUntilAllItsObjectsAreStored(t *testing.T) {
	t.Parallel()
	d := Dir(t.TempDir())
	putRange(t, d, 1, 10, true)
	putRange(t, d, 11, 20, false) // planned, being written
	if n, err := count(t, d); err != nil || n != 10 {
		t.Fatalf("%d rows, %v", n, err)
	}
	// Once a later range exists, the missing object was removed.
	putRange(t, d, 21, 30, true)
	if _, err := count(t, d); err == nil || !strings.Contains(err.Error(), "rows were removed") {
		t.Fatalf("a removed object: %v", err)
	}
}
