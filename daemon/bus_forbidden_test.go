package garmd_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/catalogue-builder/natsperm"
	garmd "github.com/garm-dev/garm/daemon"
	"github.com/garm-dev/garm/devkit/idp"
	"github.com/garm-dev/garm/examples/calculator/calculator"
	calcv1 "github.com/garm-dev/garm/examples/calculator/gen/calc/v1"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/wire"
)

// startPermittedBus starts a NATS server that admits each identity of set
// by user and password with its derived permissions.
func startPermittedBus(t *testing.T, set *natsperm.Set) string {
	t.Helper()
	var users []*server.User
	for _, id := range set.Identities {
		perms := id.Permissions
		sp := &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: perms.Publish.Allow, Deny: perms.Publish.Deny},
			Subscribe: &server.SubjectPermission{Allow: perms.Subscribe.Allow, Deny: perms.Subscribe.Deny},
		}
		if perms.Responses {
			sp.Response = &server.ResponsePermission{MaxMsgs: natsperm.ResponsesMax}
		}
		users = append(users, &server.User{Username: id.Name, Password: "pw-" + id.Name, Permissions: sp})
	}
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, Users: users})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(waitTimeout) {
		t.Fatal("the NATS server did not start")
	}
	t.Cleanup(srv.Shutdown)
	return "nats://" + srv.Addr().String()
}

// When the bus refuses garmd's publish on a tool's subject — its
// permissions are not the catalogue's — the call answers 503 at once with
// error kind bus_forbidden on its row, not as a slow tool at the deadline;
// the caller learns nothing of permissions, and the other tools answer.
func TestAPublishTheBusRefusesIsA503BusForbiddenNotATimeout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, err := builder.FromRoots(context.Background(), "../examples/calculator/proto")
	if err != nil {
		t.Fatal(err)
	}
	set := natsperm.Derive(c.Artifact)
	add := wire.Subject(calcv1.CalculatorTools[0].Method)
	garmdID := set.Identity(natsperm.GarmdUser)
	if !slices.Contains(garmdID.Permissions.Publish.Allow, add) {
		t.Fatalf("garmd's derived permissions do not name %s: %v", add, garmdID.Permissions.Publish.Allow)
	}
	garmdID.Permissions.Publish.Deny = append(garmdID.Permissions.Publish.Deny, add)
	url := startPermittedBus(t, set)

	toolConn, err := nats.Connect(url, nats.UserInfo(natsperm.ToolUser("calc.v1"), "pw-"+natsperm.ToolUser("calc.v1")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(toolConn.Close)
	svc := garmtool.New("calc", "0.1.0", garmtool.WithDrainTimeout(time.Second))
	if err := calcv1.ServeCalculator(svc, calculator.Calculator{}); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- svc.Run(ctx, toolConn) }()
	t.Cleanup(func() { stop(); <-served })
	select {
	case <-svc.Ready():
	case err := <-served:
		t.Fatalf("the calculator stopped: %v", err)
	}

	personas, err := idp.LoadPersonas("testdata/personas.yaml")
	if err != nil {
		t.Fatal(err)
	}
	provider, err := idp.New(personas, idp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	idpSrv, err := provider.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idpSrv.Close() })
	cataloguePath, keyPath := filepath.Join(dir, "catalogue.binpb"), filepath.Join(dir, "hash.key")
	writeFile(t, cataloguePath, c.Bytes)
	writeFile(t, keyPath, []byte("a test hash key of more than sixteen bytes\n"))
	logs := &logBuffer{}
	cfg := garmd.DefaultConfig()
	cfg.Catalogue, cfg.HashKeyFile = cataloguePath, keyPath
	cfg.NATS, cfg.NATSUserFile = url, userFile(t, dir, natsperm.GarmdUser)
	cfg.Listen, cfg.AdminListen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Issuers, cfg.JWKS = []string{provider.Issuer()}, []string{idpSrv.JWKSURL()}
	cfg.LedgerStream = false
	// A refusal mistaken for a slow tool is a 504 with kind timeout once
	// this passes, within the client's patience.
	cfg.ToolTimeout = waitTimeout / 2
	cfg.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	d, err := garmd.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopDaemon := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- d.Run(runCtx) }()
	t.Cleanup(func() { stopDaemon(); <-ran })

	token, err := provider.Token("public", "")
	if err != nil {
		t.Fatal(err)
	}
	call := func(path, body string) (int, string, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, "http://"+d.Addr().String()+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := (&http.Client{Timeout: waitTimeout}).Do(req)
		if err != nil {
			t.Fatalf("%s: %v\n%s", path, err, logs.String())
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("Garm-Event-Id")
	}

	status, body, eventID := call(addPath, `{"a": 40, "b": 2.5}`)
	if status != http.StatusServiceUnavailable {
		t.Fatalf("a call garmd may not publish answered %d %s, want 503", status, body)
	}
	var wireBody map[string]any
	if err := json.Unmarshal([]byte(body), &wireBody); err != nil || wireBody["code"] != "unavailable" {
		t.Errorf("the body %s is not the static unavailable one", body)
	}
	for _, secret := range []string{"permission", "forbidden", add} {
		if strings.Contains(strings.ToLower(body), strings.ToLower(secret)) {
			t.Errorf("the caller learns %q: %s", secret, body)
		}
	}
	row := logRow(t, logs.String(), eventID)
	if row["outcome"] != "error" || row["error_kind"] != "bus_forbidden" || !strings.Contains(row["error_detail"].(string), add) {
		t.Errorf("the row of the refused call: outcome %v, kind %v, detail %v", row["outcome"], row["error_kind"], row["error_detail"])
	}
	if status, body, _ := call("/calc.v1.Calculator/Divide", `{"dividend": 9, "divisor": 3}`); status != http.StatusOK {
		t.Errorf("a tool garmd may publish to answered %d %s", status, body)
	}
	// The refusal ends the waiting request first and then reaches the
	// handler garmd logs with, on the connection's own goroutine: the line
	// follows the answer, within a bound.
	logged := func() bool { return strings.Contains(logs.String(), `"msg":"garmd: the bus refused"`) }
	for deadline := time.Now().Add(waitTimeout); !logged() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !logged() {
		t.Errorf("the violation is not in garmd's log:\n%s", logs.String())
	}
}

// logRow is the garm.ledger line of the event id in a JSON log.
func logRow(t *testing.T, logs, id string) map[string]any {
	t.Helper()
	for line := range strings.Lines(logs) {
		var row map[string]any
		if json.Unmarshal([]byte(line), &row) == nil && row["msg"] == "garm.ledger" && row["event_id"] == id {
			return row
		}
	}
	t.Fatalf("no ledger row %s in the log:\n%s", id, logs)
	return nil
}
