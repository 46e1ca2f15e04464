package garmd_test

import (
	"net/http"
	"strings"
	"testing"
)

const malformedHeadersBody = `{"code":"invalid_argument","message":"A header garm reads was sent more than once or is malformed."}`

func TestAHeaderSentTwiceIsRefusedTheSameOnEveryRoute(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	support, outsider := s.token("support"), s.token("outsider")
	calls := []struct {
		name, path string
		header     http.Header
	}{
		{"a visible tool", getPath, http.Header{"Authorization": {"Bearer " + support, "Bearer " + outsider}}},
		{"an invisible tool", getPath, http.Header{"Authorization": {"Bearer " + outsider}, "Garm-Grant": {"a", "b"}}},
		{"a missing route", "/fix.v1.Records/Nope", http.Header{"Authorization": {"Bearer " + support}, "Garm-Timeout-Ms": {"5", "5"}}},
		{"the listing", "/garm.v1.ToolCatalogService/ListTools", http.Header{"Authorization": {"Bearer " + support}, "Garm-Correlation-Id": {"a", "b"}}},
		{"no token at all", getPath, http.Header{"Content-Type": {"application/json", "application/proto"}}},
		{"a folded spelling", getPath, http.Header{"Authorization": {"Bearer " + support}, "Garm_grant": {"x"}}},
		{"a list of media types", getPath, http.Header{"Authorization": {"Bearer " + support}, "Content-Type": {"application/json, application/proto"}}},
	}
	var first *answer
	for _, c := range calls {
		ans := s.postRaw(c.path, `{"id": "r1"}`, c.header)
		if ans.status != http.StatusBadRequest || string(ans.body) != malformedHeadersBody {
			t.Errorf("%s: %d %s", c.name, ans.status, ans.body)
			continue
		}
		// Nothing about what is served: no digest, the same headers.
		if ans.header.Get("Garm-Catalogue-Digest") != "" {
			t.Errorf("%s: the refusal names the catalogue", c.name)
		}
		if first == nil {
			first = ans
		} else if !sameHeaders(first.header, ans.header) {
			t.Errorf("%s: headers differ:\n%v\n%v", c.name, ans.header, first.header)
		}
		row := s.row(ans.eventID())
		if row.GetOutcome() != "denied" || row.GetPrincipalSubject() != "" || row.GetErrorDetail() == "" {
			t.Errorf("%s: row %v", c.name, row)
		}
	}
}

func TestTheRouteIsTheTargetAsSent(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	token := s.token("public")
	missing := s.post("/calc.v1.Calculator/Nope", token, `{"a": 1, "b": 2}`)
	if missing.status != http.StatusNotFound {
		t.Fatalf("a missing route: %d %s", missing.status, missing.body)
	}
	for _, target := range []string{
		"/calc.v1.Calculator/%41dd",    // %41 is A
		"/calc.v1.Calculator%2FAdd",    // an encoded slash
		"/calc.v1.Calculator/Ad%64",    // %64 is d
		"/calc%2Ev1.Calculator/Add",    // an encoded dot
		"/calc.v1.Calculator/Add%2F",   // a trailing encoded slash
		"/calc.v1.Calculator//Add",     // not cleaned
		"/calc.v1.Calculator/./Add",    // not cleaned
		"/calc.v1.Calculator/x/../Add", // not cleaned
	} {
		ans := s.post(target, token, `{"a": 1, "b": 2}`)
		if ans.status != missing.status || string(ans.body) != string(missing.body) || !sameHeaders(ans.header, missing.header) {
			t.Errorf("%s: %d %s %v, a missing route: %d %s %v", target, ans.status, ans.body, ans.header, missing.status, missing.body, missing.header)
			continue
		}
		if row := s.row(ans.eventID()); row.GetTool() != target {
			t.Errorf("%s: the row records the route %q", target, row.GetTool())
		}
	}
	if ans := s.post(addPath, token, `{"a": 1, "b": 2}`); ans.status != http.StatusOK {
		t.Fatalf("the route itself: %d %s", ans.status, ans.body)
	}
}

func TestJSONIsRecognisedByItsMediaTypeNotAPrefix(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	token := s.token("public")
	for ct, status := range map[string]int{
		"application/json":                 http.StatusOK,
		"application/JSON; charset=UTF-8":  http.StatusOK,
		"application/jsonx":                http.StatusBadRequest, // read as binary protobuf: it does not decode
		"application/json; charset=latin1": http.StatusBadRequest,
	} {
		ans := s.post(addPath, token, `{"a": 1, "b": 2}`, "Content-Type", ct)
		if ans.status != status {
			t.Errorf("%s: %d %s", ct, ans.status, ans.body)
		}
		if status == http.StatusOK && !strings.HasPrefix(ans.header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: answered in %s", ct, ans.header.Get("Content-Type"))
		}
	}
}
