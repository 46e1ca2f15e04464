package duckdbtest

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/garm-dev/garm/devkit/s3test"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/ledger/lake"
	"github.com/garm-dev/garm/ledger/ledgertest"
	"github.com/garm-dev/garm/ledger/rows"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

var (
	tools    = []string{"bank.v1.Accounts.Get", "bank.v1.Payments.Send", "calc.v1.Calculator.Add"}
	subjects = []string{"alice", "bob", "carol"}
	apps     = []string{"garmd", "garmd-eu"}
)

// call is the nth call of a plane over three days: every field an
// auditor asks about varies with n.
func call(n int, app string) *ledgerv1.Event {
	e := &ledgerv1.Event{
		EventId:          fmt.Sprintf("%s-%06d", app, n),
		Time:             timestamppb.New(time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * 97 * time.Second)),
		Tenant:           "acme",
		App:              app,
		Tool:             tools[n%len(tools)],
		PrincipalSubject: subjects[n%7%len(subjects)],
		Outcome:          "ok",
		Tags:             map[string]string{"task_id": fmt.Sprint(n % 5)},
	}
	if n%11 == 0 {
		e.Outcome, e.ErrorKind, e.InstanceRule = "denied", "tool_refused", "own_customer"
	}
	if n%4 == 0 {
		e.CompartmentsEffective = []string{"payments"}
	}
	if n%6 == 0 {
		e.CompartmentsEffective = append(e.CompartmentsEffective, "pii")
		e.DisclosedCount = uint32(n%3 + 1)
	}
	return e
}

// publish writes n calls of each app as garmd does, 25 rows a message.
func publish(t *testing.T, n int) {
	t.Helper()
	srvJS := garmtooltest.StartJetStream(t)
	_, js := garmtooltest.ConnectJetStream(t, srvJS.URL())
	ledgertest.CreateStreams(t, js)
	ctx := context.Background()
	for _, app := range apps {
		for i := 0; i < n; i += 25 {
			b := &ledgerv1.Batch{}
			for j := i; j < min(i+25, n); j++ {
				b.Events = append(b.Events, call(j, app))
			}
			data, err := proto.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := js.Publish(ctx, wire.LedgerSubject("acme", app), data); err != nil {
				t.Fatal(err)
			}
		}
	}
	store := s3test.Start(t)
	store.CreateBucket(t, "lake")
	bucket := &lake.Bucket{Client: store.Client(t), Name: "lake", Prefix: "ledger/"}
	if _, err := lake.ExportRange(ctx, js, bucket, lake.Range{}, lake.Options{RollRows: 1500}); err != nil {
		t.Fatal(err)
	}
	streamRows = nil
	if err := rows.ScanStream(ctx, js, func(r rows.Row) error {
		streamRows = append(streamRows, proto.Clone(r.Event).(*ledgerv1.Event))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// DuckDB reads local files: the auditor's copy of the lake.
	lakeDir = t.TempDir()
	keys, err := bucket.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range keys {
		data, _, err := bucket.Get(ctx, key)
		if err == nil {
			err = lake.Dir(lakeDir).Put(ctx, key, data)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

var (
	streamRows []*ledgerv1.Event
	lakeDir    string
)

func query(t *testing.T, db *sql.DB, q string, args ...any) map[string]int {
	t.Helper()
	rs, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rs.Close()
	got := map[string]int{}
	for rs.Next() {
		var k string
		var n int
		if err := rs.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		got[k] = n
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

func same(t *testing.T, what string, got, want map[string]int) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Errorf("%s: DuckDB says\n%v\nthe stream says\n%v", what, got, want)
	}
	if len(want) == 0 {
		t.Errorf("%s: the question has no answer to compare", what)
	}
	t.Logf("%s: %d answers agree", what, len(want))
}

func TestDuckDBAnswersAnAuditorsQuestionsAsTheStreamDoes(t *testing.T) {
	publish(t, 4000)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(fmt.Sprintf(`CREATE VIEW ledger AS SELECT * FROM read_parquet('%s', hive_partitioning = true)`,
		filepath.Join(lakeDir, "date=*", "app=*", "*.parquet"))); err != nil {
		t.Fatal(err)
	}

	total := query(t, db, `SELECT 'rows', count(*) FROM ledger`)
	same(t, "rows", total, map[string]int{"rows": len(streamRows)})

	// Calls per tool per day, by the date partition.
	want := map[string]int{}
	for _, e := range streamRows {
		want[e.GetTool()+" "+e.GetTime().AsTime().UTC().Format(time.DateOnly)]++
	}
	same(t, "calls per tool per day", query(t, db,
		`SELECT tool || ' ' || CAST(date AS VARCHAR), count(*) FROM ledger GROUP BY ALL`), want)

	// Every refusal for one subject.
	want = map[string]int{}
	for _, e := range streamRows {
		if e.GetOutcome() == "denied" && e.GetPrincipalSubject() == "bob" {
			want[e.GetEventId()+" "+e.GetErrorKind()]++
		}
	}
	same(t, "bob's refusals", query(t, db,
		`SELECT event_id || ' ' || error_kind, count(*) FROM ledger WHERE outcome = 'denied' AND principal_subject = ? GROUP BY ALL`, "bob"), want)

	// Every call where an audit_on_read field was disclosed to a caller
	// cleared for a compartment: the row counts disclosures and records the
	// compartments the call was decided with, never the fields' values.
	want = map[string]int{}
	for _, e := range streamRows {
		if e.GetDisclosedCount() > 0 && slices.Contains(e.GetCompartmentsEffective(), "pii") {
			want[e.GetEventId()] = int(e.GetDisclosedCount())
		}
	}
	same(t, "disclosures under pii", query(t, db,
		`SELECT event_id, disclosed_count FROM ledger WHERE disclosed_count > 0 AND list_contains(compartments_effective, 'pii')`), want)

	// The partition column app agrees with the row's own app, and tags read
	// as a map.
	want = map[string]int{}
	for _, e := range streamRows {
		want[e.GetApp()+" "+e.GetTags()["task_id"]]++
	}
	same(t, "calls per app and task", query(t, db,
		`SELECT app || ' ' || tags['task_id'], count(*) FROM ledger GROUP BY ALL`), want)
}

// TestTheDocsDuckDBQueriesRunOnAnExportedLake runs every statement of the
// DuckDB block of docs/ledger.md on an exported lake: each must run and
// find rows, so the docs cannot show a query that does not work.
func TestTheDocsDuckDBQueriesRunOnAnExportedLake(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "ledger.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "DuckDB, on the lake copied to a directory")
	_, rest, ok2 := strings.Cut(rest, "```sql\n")
	block, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/ledger.md has no DuckDB block where this test looks for it")
	}
	publish(t, 600)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	block = strings.ReplaceAll(block, "'lake/", "'"+filepath.ToSlash(lakeDir)+"/")
	statements := 0
	for _, stmt := range strings.Split(block, ";") {
		var lines []string
		for _, line := range strings.Split(stmt, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "--") {
				lines = append(lines, line)
			}
		}
		stmt = strings.TrimSpace(strings.Join(lines, "\n"))
		if stmt == "" {
			continue
		}
		statements++
		if strings.HasPrefix(stmt, "CREATE") {
			if _, err := db.Exec(stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
			continue
		}
		rs, err := db.Query(stmt)
		if err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		n := 0
		for rs.Next() {
			n++
		}
		if err := rs.Err(); err != nil || n == 0 {
			t.Errorf("%s: %d rows, %v", stmt, n, err)
		}
		rs.Close()
	}
	if statements < 5 {
		t.Fatalf("the DuckDB block has %d statements", statements)
	}
}
