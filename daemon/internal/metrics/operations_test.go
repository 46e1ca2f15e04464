package metrics_test

import (
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/keyset"
	"github.com/garm-dev/garm/daemon/internal/metrics"
)

func TestPublishesAreCountedByStreamAndResultAndStrayValuesFoldIntoOtherAndError(t *testing.T) {
	var ops metrics.Operations
	m := metrics.New("test", metrics.Sources{Operations: &ops})
	ops.CountPublish(metrics.StreamLedger, metrics.PublishOK)
	ops.CountPublish(metrics.StreamLedger, metrics.PublishOK)
	ops.CountPublish(metrics.StreamAudit, metrics.PublishTimeout)
	ops.CountPublish(metrics.StreamGrantsSpent, metrics.PublishRefused)
	ops.CountPublish(metrics.Stream(200), metrics.PublishResult(200))

	want := map[[2]string]float64{
		{"ledger", "ok"}: 2, {"audit", "timeout"}: 1, {"grants_spent", "refused"}: 1, {"other", "error"}: 1,
	}
	for _, stream := range []string{"ledger", "audit", "notify", "grants_spent", "other"} {
		for _, result := range []string{"ok", "refused", "timeout", "error"} {
			got := value(t, m, metrics.PublishesName, map[string]string{"stream": stream, "result": result})
			if w := want[[2]string{stream, result}]; got != w {
				t.Errorf("%s{stream=%q,result=%q} = %v, want %v", metrics.PublishesName, stream, result, got, w)
			}
		}
	}
}

func TestSpendsAuditFailuresAndReloadsAreCountedByResult(t *testing.T) {
	var ops metrics.Operations
	m := metrics.New("test", metrics.Sources{Operations: &ops})
	ops.CountSpend(metrics.SpendSpent)
	ops.CountSpend(metrics.SpendAlreadySpent)
	ops.CountSpend(metrics.SpendAlreadySpent)
	ops.CountSpend(metrics.SpendUnavailable)
	ops.CountAuditWriteFailure()
	ops.CountReload(metrics.ReloadSwapped)
	ops.CountReload(metrics.ReloadRefused)
	ops.CountReload(metrics.ReloadUnreachable)
	ops.CountReload(metrics.ReloadUnreachable)

	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{metrics.GrantSpendsName, map[string]string{"result": "spent"}, 1},
		{metrics.GrantSpendsName, map[string]string{"result": "already_spent"}, 2},
		{metrics.GrantSpendsName, map[string]string{"result": "unavailable"}, 1},
		{metrics.AuditWriteFailuresName, nil, 1},
		{metrics.CatalogueReloadsName, map[string]string{"result": "swapped"}, 1},
		{metrics.CatalogueReloadsName, map[string]string{"result": "refused"}, 1},
		{metrics.CatalogueReloadsName, map[string]string{"result": "unreachable"}, 2},
	} {
		if got := value(t, m, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

func TestTheBusConnectionAndItsReconnectsAreReadAtScrapeTime(t *testing.T) {
	connected, reconnects := true, uint64(0)
	m := metrics.New("test", metrics.Sources{Bus: func() (bool, uint64) { return connected, reconnects }})
	if got := value(t, m, metrics.BusConnectedName, nil); got != 1 {
		t.Fatalf("%s = %v while connected, want 1", metrics.BusConnectedName, got)
	}
	connected, reconnects = false, 2
	if got := value(t, m, metrics.BusConnectedName, nil); got != 0 {
		t.Fatalf("%s = %v while reconnecting, want 0", metrics.BusConnectedName, got)
	}
	if got := value(t, m, metrics.BusReconnectsName, nil); got != 2 {
		t.Fatalf("%s = %v, want 2", metrics.BusReconnectsName, got)
	}
}

func TestKeySetsReportTheirAgeOnceFetchedAndTheirFetchesByResult(t *testing.T) {
	sets := []metrics.KeySet{
		{Issuer: "https://idp.example", Use: "token", Stats: keyset.Stats{Fetched: true, Age: 90 * time.Second, FetchesOK: 3, FetchesFailed: 1}},
		{Issuer: "https://approvals.example", Use: "grant", Stats: keyset.Stats{FetchesFailed: 2}},
	}
	m := metrics.New("test", metrics.Sources{KeySets: func() []metrics.KeySet { return sets }})
	token := map[string]string{"issuer": "https://idp.example", "use": "token"}
	if got := value(t, m, metrics.KeySetAgeName, token); got != 90 {
		t.Errorf("%s%v = %v, want 90", metrics.KeySetAgeName, token, got)
	}
	if has(t, m, metrics.KeySetAgeName, map[string]string{"issuer": "https://approvals.example", "use": "grant"}) {
		t.Errorf("a key set never fetched has an age")
	}
	for _, c := range []struct {
		issuer, use, result string
		want                float64
	}{
		{"https://idp.example", "token", "ok", 3},
		{"https://idp.example", "token", "failed", 1},
		{"https://approvals.example", "grant", "ok", 0},
		{"https://approvals.example", "grant", "failed", 2},
	} {
		labels := map[string]string{"issuer": c.issuer, "use": c.use, "result": c.result}
		if got := value(t, m, metrics.KeySetFetchesName, labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", metrics.KeySetFetchesName, labels, got, c.want)
		}
	}
}

func TestCountingAnOperationDoesNotAllocate(t *testing.T) {
	var ops metrics.Operations
	allocs := testing.AllocsPerRun(100, func() {
		ops.CountPublish(metrics.StreamLedger, metrics.PublishOK)
		ops.CountSpend(metrics.SpendSpent)
		ops.CountAuditWriteFailure()
		ops.CountReload(metrics.ReloadSwapped)
	})
	if allocs != 0 {
		t.Fatalf("counting allocated %v times per run, want 0", allocs)
	}
}

// value is the value of the one series called name whose labels include
// labels; the test fails when there is none.
func value(t *testing.T, m *metrics.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	v, ok := find(t, m, name, labels)
	if !ok {
		t.Fatalf("no series %s%v", name, labels)
	}
	return v
}

// has says whether a series called name with labels is exposed.
func has(t *testing.T, m *metrics.Metrics, name string, labels map[string]string) bool {
	t.Helper()
	_, ok := find(t, m, name, labels)
	return ok
}

func find(t *testing.T, m *metrics.Metrics, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	families, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, s := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range s.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			switch {
			case s.GetCounter() != nil:
				return s.GetCounter().GetValue(), true
			case s.GetGauge() != nil:
				return s.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}
