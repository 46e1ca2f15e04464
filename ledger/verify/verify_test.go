package verify_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/ledger/head"
	"github.com/garm-dev/garm/ledger/ledgertest"
	"github.com/garm-dev/garm/ledger/rows"
	"github.com/garm-dev/garm/ledger/verify"
)

func TestAnUntouchedLedgerVerifies(t *testing.T) {
	t.Parallel()
	s := ledgertest.Signer(t)
	evs := events(2500)
	sum, err := check(t, ledgertest.Keys(s), sealEvery(t, s, evs, 1000), evs, false)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rows != 2500 || sum.Heads != 3 || sum.Unsealed != 0 {
		t.Fatalf("summary %+v", sum)
	}
}

// TestEveryTamperingIsCaughtAndNamed is the tamper table: each
// change to the rows or the heads fails, with a message naming the first
// head or rows that fail.
func TestEveryTamperingIsCaughtAndNamed(t *testing.T) {
	t.Parallel()
	s, stranger := ledgertest.Signer(t), ledgertest.Signer(t)
	keys := ledgertest.Keys(s)
	cases := []struct {
		name   string
		tamper func(evs []*ledgerv1.Event, heads []verify.Head) ([]*ledgerv1.Event, []verify.Head)
		want   []string
	}{
		{"a row edited", func(evs []*ledgerv1.Event, hs []verify.Head) ([]*ledgerv1.Event, []verify.Head) {
			evs[1234].Feature = "payroll"
			return evs, hs
		}, []string{"head 2 (size 2000) does not match rows 1000–1999", `event "ev-0001000"`, "edited"}},
		{"a row's tag edited", func(evs []*ledgerv1.Event, hs []verify.Head) ([]*ledgerv1.Event, []verify.Head) {
			evs[2100].Tags["c"] = "forged"
			return evs, hs
		}, []string{"head 3 (size 2500) does not match rows 2000–2499"}},
		{"a row dropped", func(evs []*ledgerv1.Event, hs []verify.Head) ([]*ledgerv1.Event, []verify.Head) {
			return append(evs[:500:500], evs[501:]...), hs
		}, []string{"head 1 (size 1000) does not match rows 0–999", `event "ev-0000000"`, `event "ev-0001000"`}},
		{"two rows swapped", func(evs []*ledgerv1.Event, hs []verify.Head) ([]*ledgerv1.Event, []verify.Head) {
			evs[1500], evs[1501] = evs[1501], evs[1500]
			return evs, hs
		}, []string{"head 2 (size 2000) does not match rows 1000–1999", "reordered"}},
		{"the last rows dropped", func(evs []*ledgerv1.Event, hs []verify.Head) ([]*ledgerv1.Event, []verify.Head) {
			return evs[:2400], hs
		}, []string{"the rows end after 2400, but head 3 covers 2500: rows 2400–2499 are missing"}},
		{"a row added after the last head", func(evs []*ledgerv1.Event, hs []verify.Head) ([]*ledgerv1.Event, []verify.Head) {
			return append(evs, ledgertest.Event(9999)), hs
		}, []string{"rows 2500–2500", `event "ev-0009999"`, "covered by no head"}},
		{"a head forged by another key", func(evs []*ledgerv1.Event, hs []verify.Head) ([]*ledgerv1.Event, []verify.Head) {
			h := hs[1].Head.Head
			h.KeyID = stranger.KeyID
			hs[1].Head = head.Sign(h, stranger.Key, nil)
			return evs, hs
		}, []string{"head 2 (size 2000)", "not hold"}},
		{"a head's root forged under the sealer's key id", func(evs []*ledgerv1.Event, hs []verify.Head) ([]*ledgerv1.Event, []verify.Head) {
			hs[2].Head.Root[0] ^= 1
			return evs, hs
		}, []string{"head 3 (size 2500)", "did not sign"}},
		{"a head removed", func(evs []*ledgerv1.Event, hs []verify.Head) ([]*ledgerv1.Event, []verify.Head) {
			return evs, append(hs[:1:1], hs[2:]...)
		}, []string{"head 3 (size 2500): it does not chain to the head before it"}},
		{"the first head removed", func(evs []*ledgerv1.Event, hs []verify.Head) ([]*ledgerv1.Event, []verify.Head) {
			return evs, hs[1:]
		}, []string{"head 2 (size 2000): it is the first head but chains to"}},
		{"two heads swapped", func(evs []*ledgerv1.Event, hs []verify.Head) ([]*ledgerv1.Event, []verify.Head) {
			hs[0], hs[1] = hs[1], hs[0]
			return evs, hs
		}, []string{"head 2 (size 2000): it is the first head"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			evs := events(2500)
			hs := sealEvery(t, s, evs, 1000)
			evs, hs = c.tamper(evs, hs)
			_, err := check(t, keys, hs, evs, false)
			if !errors.Is(err, verify.ErrFailed) {
				t.Fatalf("not caught: %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the message does not name %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestUnsealedRowsPassOnlyWhenAllowed(t *testing.T) {
	t.Parallel()
	s := ledgertest.Signer(t)
	evs := events(1200)
	hs := sealEvery(t, s, evs[:1000], 1000)
	sum, err := check(t, ledgertest.Keys(s), hs, evs, true)
	if err != nil || sum.Unsealed != 200 {
		t.Fatalf("summary %+v, error %v", sum, err)
	}
}

// BenchmarkVerifyAMillionRows is verification's cost: a file of 1,000,000
// rows decoded, re-encoded deterministically, hashed and checked against
// a head every 1,000 rows. Run it once: -bench VerifyAMillion -benchtime 1x.
func BenchmarkVerifyAMillionRows(b *testing.B) {
	const n = 1_000_000
	s := ledgertest.Signer(b)
	evs := events(n)
	hs := sealEvery(b, s, evs, 1000)
	path := filepath.Join(b.TempDir(), "rows")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	writeRows(b, f, evs)
	f.Close()
	evs = nil
	keys := ledgertest.Keys(s)
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		v, err := verify.New(keys, hs)
		if err != nil {
			b.Fatal(err)
		}
		if err := rows.ScanFile(f, v.Row); err != nil {
			b.Fatal(err)
		}
		if _, err := v.Finish(false); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
}
