package chain_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/transport"
)

// quarantined quarantines the packages it holds, with their reasons.
type quarantined map[string]string

func (q quarantined) Quarantined(pkg string) (string, bool) {
	reason, ok := q[pkg]
	return reason, ok
}

func TestAQuarantinedPackagesVisibleToolIsUnavailableAndNeverReached(t *testing.T) {
	r := newRig(t)
	r.chain.Quarantine = quarantined{"calc.v1": "package calc.v1: service calc_v1_Calculator advertises descriptor hash 00ff"}
	reached := false
	r.reply = func(context.Context, *transport.Request) (*transport.Reply, error) {
		reached = true
		return nil, transport.ErrNoResponders
	}
	resp := r.chain.Run(context.Background(), r.request(r.token(t), "/calc.v1.Calculator/Add", `{"a":1,"b":2}`))
	if resp.Status != http.StatusServiceUnavailable || string(resp.Body) != `{"code":"unavailable","message":"The tool is not available right now."}` {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
	if reached {
		t.Error("the request reached the tool")
	}
	rows := r.recorder.Rows()
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	row := rows[0]
	if row.GetOutcome() != "error" || row.GetErrorKind() != "quarantined" || row.GetTool() != "calc.v1.add" ||
		!strings.Contains(row.GetErrorDetail(), "advertises descriptor hash 00ff") {
		t.Fatalf("row %v", row)
	}
}

func TestAnUnknownRouteIsStillNotFoundWhileItsPackageIsQuarantined(t *testing.T) {
	r := newRig(t)
	r.chain.Quarantine = quarantined{"calc.v1": "a reason"}
	resp := r.chain.Run(context.Background(), r.request(r.token(t), "/calc.v1.Calculator/Nope", `{}`))
	if resp.Status != http.StatusNotFound {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
}
