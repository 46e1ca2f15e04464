package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/devkit/s3test"
	"github.com/garm-dev/garm/ledger/lake"
	"github.com/garm-dev/garm/ledger/merkle"
	"github.com/garm-dev/garm/ledger/rows"
)

// lakeStore is a real S3-compatible store with an empty bucket "lake",
// which the AWS SDK's default chain reaches for the rest of the test (so
// the test cannot run in parallel).
func lakeStore(t *testing.T) *s3test.Server {
	t.Helper()
	srv := s3test.Start(t)
	srv.CreateBucket(t, "lake")
	srv.Env(t)
	return srv
}

// download copies the lake under s3://lake/ledger/ to a local directory, as
// an auditor would with aws s3 sync.
func download(t *testing.T, srv *s3test.Server) string {
	t.Helper()
	ctx := context.Background()
	b := &lake.Bucket{Client: srv.Client(t), Name: "lake", Prefix: "ledger/"}
	keys, err := b.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, key := range keys {
		data, _, err := b.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := lake.Dir(dir).Put(ctx, key, data); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestGarmLedgerVerifyChecksTheLakeAgainstTheHeadsAndCatchesEachTamper(t *testing.T) {
	url, _, _, jwks := sealedBus(t, 2345)
	srv := lakeStore(t)
	code, out, errs := garmLedger(t, "ledger", "export", "--once", "--nats", url, "--to", "s3://lake/ledger", "--roll-rows", "1000")
	if code != exitOK || !strings.HasPrefix(out, "2345 rows in 3 files (3 ranges) to s3://lake/ledger/, through stream message 47") {
		t.Fatalf("export: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("garm ledger export --once: %s", strings.TrimSpace(out))
	code, out, errs = garmLedger(t, "ledger", "verify", "--lake", "s3://lake/ledger", "--nats", url, "--jwks", jwks)
	if code != exitOK || !strings.HasPrefix(out, "ok: 2345 rows, ") {
		t.Fatalf("verify of the lake on S3: exit %d\n%s%s", code, out, errs)
	}
	heads := filepath.Join(t.TempDir(), "heads.jsonl")
	if code, _, errs := garmLedger(t, "ledger", "dump", "--nats", url, "--rows", heads+".rows", "--heads", heads); code != exitOK {
		t.Fatalf("dump: %s", errs)
	}
	if code, out, errs := garmLedger(t, "ledger", "verify", "--lake", download(t, srv), "--heads", heads, "--jwks", jwks); code != exitOK || !strings.HasPrefix(out, "ok: 2345 rows, ") {
		t.Fatalf("verify of the lake copied to a directory: exit %d\n%s%s", code, out, errs)
	}

	second := "date=2025-12-06/app=garmd/00000000000000000021-00000000000000000040.parquet"
	tampers := []struct {
		name string
		edit func(t *testing.T, dir string)
		want []string
	}{
		{"a column edited", func(t *testing.T, dir string) {
			editRecord(t, dir, second, 7, func(r *lake.Record) { r.Tool = "bank.v1.Accounts.Close" })
		}, []string{second, "does not hash to its leaf_hash"}},
		{"a column edited with its leaf hash made to match", func(t *testing.T, dir string) {
			editRecord(t, dir, second, 7, func(r *lake.Record) { r.Tool = "bank.v1.Accounts.Close"; r.LeafHash = rehash(t, r) })
		}, []string{"does not match rows 1000–1999", "edited"}},
		{"a file removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, second)); err != nil {
				t.Fatal(err)
			}
		}, []string{second, "rows were removed"}},
		{"a file and its range's manifest removed", func(t *testing.T, dir string) {
			for _, p := range []string{second, "_garm/ranges/00000000000000000021-00000000000000000040.json"} {
				if err := os.Remove(filepath.Join(dir, p)); err != nil {
					t.Fatal(err)
				}
			}
		}, []string{"covers 2000", "are missing"}},
		{"rows doubled by a file under another range", func(t *testing.T, dir string) {
			data, err := os.ReadFile(filepath.Join(dir, second))
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, "date=2025-12-06/app=garmd/00000000000000000030-00000000000000000040.parquet"), data, 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
		}, []string{"both hold stream message 30"}},
		{"two rows swapped", func(t *testing.T, dir string) {
			editFile(t, dir, second, func(recs []lake.Record) {
				a, b := recs[3], recs[4]
				a.Seq, a.BatchIndex, b.Seq, b.BatchIndex = b.Seq, b.BatchIndex, a.Seq, a.BatchIndex
				recs[3], recs[4] = b, a
			})
		}, []string{"does not match rows 1000–1999", "reordered"}},
	}
	for _, tc := range tampers {
		t.Run(tc.name, func(t *testing.T) {
			dir := download(t, srv)
			tc.edit(t, dir)
			code, out, errs := garmLedger(t, "ledger", "verify", "--lake", dir, "--heads", heads, "--jwks", jwks)
			if code != exitFailed {
				t.Fatalf("a tampered lake verified: exit %d\n%s%s", code, out, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(errs, w) {
					t.Errorf("the failure does not say %q:\n%s", w, errs)
				}
			}
		})
	}
}

// editRecord rewrites record i of a lake file through edit.
func editRecord(t *testing.T, dir, key string, i int, edit func(*lake.Record)) {
	t.Helper()
	editFile(t, dir, key, func(recs []lake.Record) { edit(&recs[i]) })
}

// rehash is the leaf hash of r's columns as they now are.
func rehash(t *testing.T, r *lake.Record) string {
	t.Helper()
	b, err := rows.Canonical(r.Event())
	if err != nil {
		t.Fatal(err)
	}
	return merkle.LeafHash(b).String()
}

// editFile rewrites a lake file's records through edit.
func editFile(t *testing.T, dir, key string, edit func([]lake.Record)) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(key))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := lake.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	edit(recs)
	if data, err = lake.Encode(recs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestGarmLedgerExportReportsEveryFlagProblemAtOnce(t *testing.T) {
	t.Parallel()
	code, _, errs := garmLedger(t, "ledger", "export", "--nats", "nats://127.0.0.1:1", "--roll-every", "10s", "--roll-rows", "0", "--since", "yesterday", "--until", "2026-12-05T00:00:00Z")
	if code != exitUsage {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"--to is required", "--roll-rows and --roll-bytes must be positive", "--roll-every is 10s; at least 1m0s",
		"--since: ", "go with --once"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr does not say %q:\n%s", want, errs)
		}
	}
}
