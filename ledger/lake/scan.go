package lake

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/garm-dev/garm/ledger/merkle"
	"github.com/garm-dev/garm/ledger/rows"
	"google.golang.org/protobuf/proto"
)

var canonical = proto.MarshalOptions{Deterministic: true}

// object is one lake file as its name describes it.
type object struct {
	key, partition string
	first, last    uint64
}

// Scan reads every lake file of store and calls fn with each row in the
// ledger's order (stream sequence, then place in the message), numbered
// from 0, for garm ledger verify. Each row's leaf is recomputed from its
// columns; a row whose columns do not hash to its leaf_hash, a row outside
// its file's range or partition, and two files that hold the same stream
// messages are refused, naming the file. Files are read a range at a time,
// so memory holds one range's rows.
func Scan(ctx context.Context, store Store, fn func(rows.Row) error) error {
	keys, err := store.List(ctx, "")
	if err != nil {
		return err
	}
	// A range's manifest names its objects: one missing was removed,
	// unless the range is the last, which an exporter may be writing (or
	// stopped writing): its objects are left out until all are there. A
	// copy of the lake without its manifests is still read: the heads
	// catch a missing row either way.
	rs, err := loadRanges(ctx, store, true)
	if err != nil {
		return err
	}
	held := map[string]bool{}
	for _, key := range keys {
		held[key] = true
	}
	for i, first := range rs.firsts {
		m := rs.byFirst[first]
		for _, key := range m.Objects {
			if held[key] {
				continue
			}
			if i < len(rs.firsts)-1 {
				return fmt.Errorf("%s%s names %s for stream messages %d–%d, and the lake does not hold it: rows were removed",
					store, manifestKey(m.First, m.Last), key, m.First, m.Last)
			}
			for _, key := range m.Objects {
				held[key] = false
			}
			break
		}
	}
	var objs []object
	for _, key := range keys {
		if part, first, last, ok := ParseObjectKey(key); ok && held[key] {
			objs = append(objs, object{key: key, partition: part, first: first, last: last})
		}
	}
	slices.SortFunc(objs, func(a, b object) int {
		return cmp.Or(cmp.Compare(a.first, b.first), cmp.Compare(a.last, b.last), cmp.Compare(a.key, b.key))
	})
	var n uint64
	var buf []byte
	for i := 0; i < len(objs); {
		j := i + 1
		for j < len(objs) && objs[j].first == objs[i].first && objs[j].last == objs[i].last {
			j++
		}
		if j < len(objs) && objs[j].first <= objs[i].last {
			return fmt.Errorf("%s and %s both hold stream message %d: rows would be read twice", objs[i].key, objs[j].key, objs[j].first)
		}
		var recs []Record
		from := map[*Record]string{}
		for _, o := range objs[i:j] {
			data, ok, err := store.Get(ctx, o.key)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("%s%s was listed but cannot be read", store, o.key)
			}
			got, err := Decode(data)
			if err != nil {
				return fmt.Errorf("%s%s is not a lake file: %w", store, o.key, err)
			}
			for k := range got {
				r := &got[k]
				if r.Seq < o.first || r.Seq > o.last || r.Partition() != o.partition {
					return fmt.Errorf("%s%s holds a row of stream message %d row %d, which belongs in %s",
						store, o.key, r.Seq, r.BatchIndex, ObjectKey(r.Partition(), o.first, o.last))
				}
			}
			recs = slices.Grow(recs, len(got))
			start := len(recs)
			recs = append(recs, got...)
			for k := start; k < len(recs); k++ {
				from[&recs[k]] = o.key
			}
		}
		order := make([]*Record, len(recs))
		for k := range recs {
			order[k] = &recs[k]
		}
		slices.SortStableFunc(order, func(a, b *Record) int {
			return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.BatchIndex, b.BatchIndex))
		})
		for k, r := range order {
			if k > 0 && order[k-1].Seq == r.Seq && order[k-1].BatchIndex == r.BatchIndex {
				return fmt.Errorf("%s%s and %s%s both hold stream message %d row %d", store, from[order[k-1]], store, from[r], r.Seq, r.BatchIndex)
			}
			e := r.Event()
			buf, err = canonical.MarshalAppend(buf[:0], e)
			if err != nil {
				return err
			}
			leaf := merkle.LeafHash(buf)
			if leaf.String() != r.LeafHash {
				return fmt.Errorf("%s%s: the row of stream message %d row %d (event %q) does not hash to its leaf_hash: its columns were edited",
					store, from[r], r.Seq, r.BatchIndex, r.EventID)
			}
			if err := fn(rows.Row{Seq: r.Seq, Index: r.BatchIndex, N: n, EventID: r.EventID, Leaf: leaf, Event: e}); err != nil {
				return err
			}
			n++
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		i = j
	}
	return nil
}
