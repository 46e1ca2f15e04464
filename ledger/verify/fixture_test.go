package verify_test

import (
	"bytes"
	"io"
	"strconv"
	"testing"
	"time"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/ledger/head"
	"github.com/garm-dev/garm/ledger/ledgertest"
	"github.com/garm-dev/garm/ledger/merkle"
	"github.com/garm-dev/garm/ledger/rows"
	"github.com/garm-dev/garm/ledger/verify"
	"google.golang.org/protobuf/proto"
)

// writeRows writes events as a file of rows: Batch messages of one row
// each, concatenated.
func writeRows(t testing.TB, w io.Writer, events []*ledgerv1.Event) {
	t.Helper()
	for _, e := range events {
		b, err := proto.Marshal(&ledgerv1.Batch{Events: []*ledgerv1.Event{e}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
}

// sealEvery signs a head every every rows of events, and one over the
// remainder, as the sealer does.
func sealEvery(t testing.TB, s head.Signer, events []*ledgerv1.Event, every int) []verify.Head {
	t.Helper()
	var tree merkle.Tree
	var prev merkle.Hash
	var out []verify.Head
	at := time.Unix(1_765_000_000, 0)
	for i, e := range events {
		b, err := rows.Canonical(e)
		if err != nil {
			t.Fatal(err)
		}
		tree.Append(merkle.LeafHash(b))
		if (i+1)%every == 0 || i == len(events)-1 {
			h := head.Head{Size: tree.Size(), Root: tree.Root(), Time: at.Add(time.Duration(i) * time.Millisecond), Prev: prev, KeyID: s.KeyID}
			out = append(out, verify.Head{Name: "head " + strconv.Itoa(len(out)+1), Head: head.Sign(h, s.Key, tree.Frontier())})
			prev = h.Hash()
		}
	}
	return out
}

func events(n int) []*ledgerv1.Event {
	out := make([]*ledgerv1.Event, n)
	for i := range out {
		out[i] = ledgertest.Event(i)
	}
	return out
}

// check verifies the file of events against heads with keys.
func check(t testing.TB, keys head.Keys, heads []verify.Head, events []*ledgerv1.Event, allowTail bool) (verify.Summary, error) {
	t.Helper()
	var file bytes.Buffer
	writeRows(t, &file, events)
	v, err := verify.New(keys, heads)
	if err != nil {
		return verify.Summary{}, err
	}
	if err := rows.ScanFile(&file, v.Row); err != nil {
		return verify.Summary{}, err
	}
	return v.Finish(allowTail)
}
