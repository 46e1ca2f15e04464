package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/ledger/head"
	"github.com/garm-dev/garm/ledger/ledgertest"
	"github.com/garm-dev/garm/ledger/merkle"
	"github.com/garm-dev/garm/ledger/sealer"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
)

// sealedBus is a bus holding n rows and the heads of a sealer whose key
// file and JWKS file are in dir.
func sealedBus(t *testing.T, n int) (url string, bus *ledgertest.Bus, keyFile, jwksFile string) {
	t.Helper()
	srv := garmtooltest.StartJetStream(t)
	_, js := garmtooltest.ConnectJetStream(t, srv.URL())
	bus = ledgertest.CreateStreams(t, js)
	dir := t.TempDir()
	keyFile, jwksFile = filepath.Join(dir, "sealer.pem"), filepath.Join(dir, "jwks.json")
	if code, out, errs := garmLedger(t, "ledger", "keygen", "--out", keyFile); code != exitOK {
		t.Fatalf("keygen: %d %s %s", code, out, errs)
	}
	code, out, errs := garmLedger(t, "ledger", "jwks", keyFile)
	if code != exitOK {
		t.Fatalf("jwks: %d %s", code, errs)
	}
	if err := os.WriteFile(jwksFile, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	signer, err := head.LoadSigner(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	bus.Publish(t, 0, n, 50)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- sealer.Run(ctx, js, sealer.Options{Signer: signer, EveryRows: 1000, Every: 200 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	}()
	ledgertest.WaitFor(t, "every row sealed", func() bool {
		h, _, ok, err := sealer.Latest(context.Background(), js)
		return err == nil && ok && h.Size == uint64(n)
	})
	cancel()
	<-done
	return srv.URL(), bus, keyFile, jwksFile
}

func garmLedger(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errs bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), ledgertest.Bound)
	defer cancel()
	code := run(ctx, args, &out, &errs)
	return code, out.String(), errs.String()
}

func TestGarmLedgerVerifyPassesAnUntouchedLedgerOnTheBus(t *testing.T) {
	t.Parallel()
	url, _, _, jwks := sealedBus(t, 2345)
	code, out, errs := garmLedger(t, "ledger", "verify", "--nats", url, "--jwks", jwks)
	if code != exitOK || !strings.HasPrefix(out, "ok: 2345 rows, ") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
}

func TestGarmLedgerVerifyNamesTheHeadWhoseRowsWereDeletedFromTheStream(t *testing.T) {
	t.Parallel()
	url, bus, _, jwks := sealedBus(t, 2345)
	s, err := bus.JS.Stream(context.Background(), wire.LedgerStream)
	if err != nil {
		t.Fatal(err)
	}
	// Message 25 holds rows 1200–1249.
	if err := s.DeleteMsg(context.Background(), 25); err != nil {
		t.Fatal(err)
	}
	code, _, errs := garmLedger(t, "ledger", "verify", "--nats", url, "--jwks", jwks)
	if code != exitFailed || !strings.Contains(errs, "does not match rows ") || !strings.Contains(errs, "dropped") {
		t.Fatalf("exit %d\nstderr: %s", code, errs)
	}
}

func TestGarmLedgerVerifyNamesAForgedHead(t *testing.T) {
	t.Parallel()
	url, bus, _, jwks := sealedBus(t, 1500)
	last, seq, _, err := sealer.Latest(context.Background(), bus.JS)
	if err != nil {
		t.Fatal(err)
	}
	forger := ledgertest.Signer(t)
	forged := last.Head
	forged.Size, forged.Prev, forged.KeyID = 1500, last.Hash(), forger.KeyID
	data, _ := json.Marshal(head.Sign(forged, forger.Key, nil))
	if _, err := bus.JS.Publish(context.Background(), sealer.HeadSubject, data); err != nil {
		t.Fatal(err)
	}
	code, _, errs := garmLedger(t, "ledger", "verify", "--nats", url, "--jwks", jwks)
	want := "head message " + strconv.FormatUint(seq+1, 10) + " (size 1500)"
	if code != exitFailed || !strings.Contains(errs, want) || !strings.Contains(errs, "signature") {
		t.Fatalf("exit %d, want a message naming %q\nstderr: %s", code, want, errs)
	}
}

func TestGarmLedgerProveGivesProofsThatVerify(t *testing.T) {
	t.Parallel()
	url, bus, _, _ := sealedBus(t, 2100)
	// A head may come early, when the interval passes: take the sizes the
	// sealer chose.
	heads, err := sealer.ReadHeads(context.Background(), bus.JS)
	if err != nil || len(heads) < 2 {
		t.Fatalf("heads %v, error %v", heads, err)
	}
	first, last := heads[0].Head.Size, heads[len(heads)-1].Head.Size
	code, out, errs := garmLedger(t, "ledger", "prove", "--nats", url, "--event", fmt.Sprintf("ev-%07d", first/3), "--size", strconv.FormatUint(first, 10))
	if code != exitOK {
		t.Fatalf("prove --event: exit %d: %s", code, errs)
	}
	var inc inclusion
	if err := json.Unmarshal([]byte(out), &inc); err != nil {
		t.Fatal(err)
	}
	leaf, _ := merkle.ParseHash(inc.LeafHash)
	root, _ := merkle.ParseHash(inc.Root)
	if inc.LeafIndex != first/3 || inc.TreeSize != first || merkle.VerifyInclusion(inc.LeafIndex, inc.TreeSize, leaf, parse(t, inc.Proof), root) != nil {
		t.Fatalf("inclusion proof %+v does not verify", inc)
	}
	code, out, errs = garmLedger(t, "ledger", "prove", "--nats", url, "--from", strconv.FormatUint(first, 10), "--to", strconv.FormatUint(last, 10))
	if code != exitOK {
		t.Fatalf("prove --from --to: exit %d: %s", code, errs)
	}
	var c consistency
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	r1, _ := merkle.ParseHash(c.Root1)
	r2, _ := merkle.ParseHash(c.Root2)
	if merkle.VerifyConsistency(c.Size1, c.Size2, r1, r2, parse(t, c.Proof)) != nil {
		t.Fatalf("consistency proof %+v does not verify", c)
	}
	if code, _, errs := garmLedger(t, "ledger", "prove", "--nats", url, "--event", "ev-9999999"); code != exitFailed || !strings.Contains(errs, "not among") {
		t.Fatalf("an unknown event: exit %d: %s", code, errs)
	}
}

func parse(t *testing.T, hexes []string) []merkle.Hash {
	t.Helper()
	out := make([]merkle.Hash, len(hexes))
	for i, s := range hexes {
		h, err := merkle.ParseHash(s)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = h
	}
	return out
}

func TestADumpedLedgerVerifiesOfflineAndAnEditedDumpDoesNot(t *testing.T) {
	t.Parallel()
	url, _, _, jwks := sealedBus(t, 1800)
	dir := t.TempDir()
	rowsFile, headsFile := filepath.Join(dir, "rows.bin"), filepath.Join(dir, "heads.jsonl")
	if code, _, errs := garmLedger(t, "ledger", "dump", "--nats", url, "--rows", rowsFile, "--heads", headsFile); code != exitOK {
		t.Fatalf("dump: exit %d: %s", code, errs)
	}
	code, out, errs := garmLedger(t, "ledger", "verify", "--rows", rowsFile, "--heads", headsFile, "--jwks", jwks)
	if code != exitOK || !strings.HasPrefix(out, "ok: 1800 rows, ") {
		t.Fatalf("verify of the dump: exit %d\n%s%s", code, out, errs)
	}
	b, err := os.ReadFile(rowsFile)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("ev-0001500"))
	b[i+len("ev-000150")] = '1' // event ev-0001500 now reads ev-0001501
	if err := os.WriteFile(rowsFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs = garmLedger(t, "ledger", "verify", "--rows", rowsFile, "--heads", headsFile, "--jwks", jwks)
	if code != exitFailed || !strings.Contains(errs, "does not match rows ") || !strings.Contains(errs, "edited") {
		t.Fatalf("verify of an edited dump: exit %d\n%s", code, errs)
	}
}
