package chain_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/chain"
)

func TestAnAdmissionIsAuthenticatedLikeACallAndRecordedOnlyWhenRefused(t *testing.T) {
	r := newRig(t)
	var observed []string
	r.chain.Observe = func(_ context.Context, _, outcome, _ string, _ time.Duration) { observed = append(observed, outcome) }
	admit := func(token string) *chain.Response {
		q := r.request(token, "/mcp", "")
		q.Admit = true
		return r.chain.Run(context.Background(), q)
	}
	if resp := admit(r.token(t)); resp.Status != http.StatusOK || resp.Code != "" || resp.Principal == nil || len(r.recorder.Rows()) != 0 {
		t.Fatalf("admitted: %d %q, rows %v", resp.Status, resp.Code, r.recorder.Rows())
	}
	resp := admit("")
	if rows := r.recorder.Rows(); resp.Status != http.StatusUnauthorized || !resp.Challenge || resp.Principal != nil || len(rows) != 1 || rows[0].GetEventId() != resp.EventID {
		t.Fatalf("refused: %d, rows %v", resp.Status, rows)
	}
	// Only the refusal counts as a call in the metrics.
	if len(observed) != 1 || observed[0] != "denied" {
		t.Fatalf("observed %v", observed)
	}
}

func TestAPageIsTheListersAndAForgedCursorIsRefusedWithARow(t *testing.T) {
	r := newRig(t)
	page := func(resume func(*catalogue.Generation) (string, error)) *chain.Response {
		q := r.request(r.token(t), "/mcp", "")
		q.Page = &chain.PageRequest{Size: 1, Resume: resume}
		return r.chain.Run(context.Background(), q)
	}
	first := page(nil)
	if first.Page == nil || len(first.Page.Entries) != 1 || !first.Page.More || len(r.recorder.Rows()) != 0 {
		t.Fatalf("the first page: %+v, rows %v", first.Page, r.recorder.Rows())
	}
	after := first.Page.Entries[0].Tool.FQN
	second := page(func(*catalogue.Generation) (string, error) { return after, nil })
	if second.Page == nil || len(second.Page.Entries) != 1 || second.Page.Entries[0].Tool.FQN <= after {
		t.Fatalf("the second page: %+v", second.Page)
	}
	forged := page(func(*catalogue.Generation) (string, error) { return "", errors.New("a forged cursor") })
	if rows := r.recorder.Rows(); forged.Code != "invalid_argument" || forged.Page != nil || len(rows) != 1 || rows[0].GetErrorDetail() != "a forged cursor" {
		t.Fatalf("forged: %q, rows %v", forged.Code, rows)
	}
}

func TestACallNamedByItsToolsFQNRecordsItsRoute(t *testing.T) {
	r := newRig(t)
	q := r.request(r.token(t), "mcp:calc.v1.add", `{}`)
	q.ToolName = "calc.v1.add"
	q.ArgumentFault = "the arguments are not an object"
	r.chain.Run(context.Background(), q)
	if rows := r.recorder.Rows(); len(rows) != 1 || rows[0].GetErrorDetail() != q.ArgumentFault {
		t.Fatalf("rows %v", rows)
	}
	r.recorder.Reset()
	q.ArgumentFault = ""
	q.Body = []byte(`{"a":"x"}`)
	r.chain.Run(context.Background(), q)
	if rows := r.recorder.Rows(); len(rows) != 1 || rows[0].GetTool() != "calc.v1.add" || rows[0].GetMethod() != "/calc.v1.Calculator/Add" {
		t.Fatalf("rows %v", rows)
	}
}
