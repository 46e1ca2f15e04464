package main

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/garm-dev/garm/daemon/internal/keyset"
	"github.com/garm-dev/garm/daemon/internal/ledger"
	"github.com/garm-dev/garm/daemon/internal/metrics"
)

// The operator's alerting rules and dashboard (deploy/prometheus).
const (
	alertRules = "../../../deploy/prometheus/garmd-alerts.yaml"
	dashboard  = "../../../deploy/prometheus/garmd-dashboard.json"
)

// exportedSeries is every series name garmd's /metrics serves, read from
// the registry garmd builds with every source present, a histogram's
// _bucket, _sum and _count included.
func exportedSeries(t *testing.T) map[string]bool {
	t.Helper()
	m := metrics.New("test", metrics.Sources{
		Ledger:        new(ledger.Counts),
		TokenCache:    func() (uint64, uint64) { return 0, 0 },
		Notifications: func() (uint64, uint64, uint64) { return 0, 0, 0 },
		InFlight:      func() int { return 0 },
		Operations:    new(metrics.Operations),
		Bus:           func() (bool, uint64) { return true, 0 },
		KeySets: func() []metrics.KeySet {
			return []metrics.KeySet{{Issuer: "https://issuer", Use: "token", Stats: keyset.Stats{Fetched: true}}}
		},
	})
	m.SetCatalogue("sha256:0", "test")
	m.ObserveCall("calc.v1.add", "ok", "", 0)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Result().Body)
	names := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		fields := strings.Fields(line)
		if len(fields) != 4 || fields[0] != "#" || fields[1] != "TYPE" {
			continue
		}
		names[fields[2]] = true
		if fields[3] == "histogram" || fields[3] == "summary" {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				names[fields[2]+suffix] = true
			}
		}
	}
	if !names[metrics.CallsName] || !names[metrics.KeySetAgeName] || !names[metrics.CatalogueInfoName] {
		t.Fatalf("the registry serves too little to hold the rules to:\n%s", body)
	}
	return names
}

// seriesName is a series name of garmd's own, Go's or the process's.
var seriesName = regexp.MustCompile(`\b(?:garm|go|process)_[a-zA-Z0-9_:]*`)

func TestTheAlertsAndTheDashboardNameOnlySeriesGarmdExports(t *testing.T) {
	exported := exportedSeries(t)
	exprs := map[string][]string{alertRules: ruleExprs(t), dashboard: dashboardExprs(t)}
	for file, list := range exprs {
		if len(list) == 0 {
			t.Fatalf("%s: no expressions found", file)
		}
		for _, expr := range list {
			names := seriesName.FindAllString(expr, -1)
			if len(names) == 0 {
				t.Errorf("%s: %q names none of garmd's series", file, expr)
			}
			for _, name := range names {
				if !exported[name] {
					t.Errorf("%s: %q names %s, which garmd does not export", file, expr, name)
				}
			}
		}
	}
}

func ruleExprs(t *testing.T) []string {
	data, err := os.ReadFile(alertRules)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []struct {
			Rules []struct {
				Expr string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			out = append(out, r.Expr)
		}
	}
	return out
}

func dashboardExprs(t *testing.T) []string {
	data, err := os.ReadFile(dashboard)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range doc.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("%s: a panel has no query", dashboard)
		}
		for _, target := range p.Targets {
			out = append(out, target.Expr)
		}
	}
	for _, v := range doc.Templating.List {
		if q, ok := v.Query.(string); ok && v.Type == "query" {
			out = append(out, q)
		}
	}
	return out
}
