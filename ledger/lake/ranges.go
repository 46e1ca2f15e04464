package lake

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"

	"github.com/garm-dev/garm/ledger/rows"
)

// RangesPrefix is where a lake keeps its ranges' manifests. Engines skip
// names that start with "_", as Hive does.
const RangesPrefix = "_garm/ranges/"

// Manifest is the plan of one range: the stream messages First to Last, the
// objects that hold their rows and how many rows. It is stored before the
// objects, so an exporter that stopped part-way through a range finds the
// range's end and rewrites the same objects rather than choosing new ones
// that would overlap them (decision 0130).
type Manifest struct {
	First   uint64   `json:"first"`
	Last    uint64   `json:"last"`
	Rows    int      `json:"rows"`
	Objects []string `json:"objects"`
}

// manifestKey names a range's manifest from its bounds, so a lake's
// ranges are known from a listing, without reading each manifest.
func manifestKey(first, last uint64) string {
	return fmt.Sprintf("%s%0*d-%0*d.json", RangesPrefix, seqDigits, first, seqDigits, last)
}

var manifestKeyPattern = regexp.MustCompile(`^` + RangesPrefix + `(\d{20})-(\d{20})\.json$`)

// ranges is every range of a lake, by first message. A Manifest read from
// a listing has only its bounds until details reads it.
type ranges struct {
	byFirst map[uint64]Manifest
	firsts  []uint64 // sorted
}

// loadRanges lists a lake's ranges; with details it also reads each
// manifest.
func loadRanges(ctx context.Context, store Store, details bool) (*ranges, error) {
	keys, err := store.List(ctx, RangesPrefix)
	if err != nil {
		return nil, err
	}
	rs := &ranges{byFirst: map[uint64]Manifest{}}
	for _, key := range keys {
		m := manifestKeyPattern.FindStringSubmatch(key)
		if m == nil {
			continue
		}
		first, err1 := strconv.ParseUint(m[1], 10, 64)
		last, err2 := strconv.ParseUint(m[2], 10, 64)
		if err1 != nil || err2 != nil || last < first {
			return nil, fmt.Errorf("%s%s is not a range's manifest", store, key)
		}
		if other, ok := rs.byFirst[first]; ok {
			return nil, fmt.Errorf("%s holds two ranges from stream message %d, to %d and to %d", store, first, other.Last, last)
		}
		rs.add(Manifest{First: first, Last: last})
		if details {
			if _, err := rs.details(ctx, store, first); err != nil {
				return nil, err
			}
		}
	}
	return rs, nil
}

// details reads the manifest of the range from first.
func (rs *ranges) details(ctx context.Context, store Store, first uint64) (Manifest, error) {
	m := rs.byFirst[first]
	if m.Objects != nil {
		return m, nil
	}
	key := manifestKey(m.First, m.Last)
	data, ok, err := store.Get(ctx, key)
	if err != nil {
		return m, err
	}
	var got Manifest
	if !ok || json.Unmarshal(data, &got) != nil || got.First != m.First || got.Last != m.Last || got.Objects == nil {
		return m, fmt.Errorf("%s%s is not a range's manifest", store, key)
	}
	rs.byFirst[first] = got
	return got, nil
}

func (rs *ranges) add(m Manifest) {
	if _, ok := rs.byFirst[m.First]; !ok {
		i := sort.Search(len(rs.firsts), func(i int) bool { return rs.firsts[i] >= m.First })
		rs.firsts = slices.Insert(rs.firsts, i, m.First)
	}
	rs.byFirst[m.First] = m
}

// planned is the range that starts at first, if one was planned.
func (rs *ranges) planned(first uint64) (Manifest, bool) {
	m, ok := rs.byFirst[first]
	return m, ok
}

// overlapping is a range other than one starting at first that shares a
// message with first–last.
func (rs *ranges) overlapping(first, last uint64) (Manifest, bool) {
	i := sort.Search(len(rs.firsts), func(i int) bool { return rs.firsts[i] > last })
	for j := i - 1; j >= 0; j-- {
		m := rs.byFirst[rs.firsts[j]]
		if m.First == first {
			continue
		}
		if m.Last >= first {
			return m, true
		}
		break
	}
	return Manifest{}, false
}

// pending is the range being filled: the rows of stream messages first to
// last, by partition.
type pending struct {
	first, last uint64
	plan        *Manifest
	parts       map[string][]Record
	rows, bytes int
	dec         rows.Decoder
}

func (p *pending) empty() bool { return p.first == 0 }

// add appends the rows of the Batch message data, stored at seq.
func (p *pending) add(seq uint64, data []byte) error {
	if p.first == 0 {
		p.first = seq
		p.parts = map[string][]Record{}
	}
	p.last = seq
	p.bytes += len(data)
	return p.dec.Batch(seq, data, func(r rows.Row) error {
		rec := FromRow(r)
		part := rec.Partition()
		p.parts[part] = append(p.parts[part], rec)
		p.rows++
		return nil
	})
}

// store writes the range: its manifest first (unless it was planned
// already), then each partition's object. Each object is written whole by
// one Put, and the same rows always make the same bytes.
func (p *pending) store(ctx context.Context, store Store, rs *ranges) (Manifest, error) {
	m := Manifest{First: p.first, Last: p.last, Rows: p.rows}
	parts := make([]string, 0, len(p.parts))
	for part := range p.parts {
		parts = append(parts, part)
	}
	sort.Strings(parts)
	for _, part := range parts {
		m.Objects = append(m.Objects, ObjectKey(part, p.first, p.last))
	}
	if other, ok := rs.overlapping(m.First, m.Last); ok {
		return m, fmt.Errorf("stream messages %d–%d: %s already holds messages %d–%d (%s): exporting them again would double rows",
			m.First, m.Last, store, other.First, other.Last, manifestKey(other.First, other.Last))
	}
	_, ok := rs.planned(m.First)
	var old Manifest
	if ok {
		var err error
		if old, err = rs.details(ctx, store, m.First); err != nil {
			return m, err
		}
	}
	if ok && (old.Last != m.Last || old.Rows != m.Rows || !slices.Equal(old.Objects, m.Objects)) {
		return m, fmt.Errorf("stream messages %d–%d: %s planned this range as messages %d–%d, %d rows in %v; the stream now gives %d–%d, %d rows in %v",
			m.First, m.Last, store, old.First, old.Last, old.Rows, old.Objects, m.First, m.Last, m.Rows, m.Objects)
	} else if !ok {
		data, err := json.Marshal(m)
		if err != nil {
			return m, err
		}
		if err := store.Put(ctx, manifestKey(m.First, m.Last), data); err != nil {
			return m, err
		}
		rs.add(m)
	}
	for i, part := range parts {
		data, err := Encode(p.parts[part])
		if err != nil {
			return m, err
		}
		if err := store.Put(ctx, m.Objects[i], data); err != nil {
			return m, err
		}
	}
	return m, nil
}
