package quarantine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/catalogue-builder/natsperm"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/quarantine"
	calcv1 "github.com/garm-dev/garm/examples/calculator/gen/calc/v1"
)

// startPermittedBus starts a NATS server admitting each identity of set by
// user and password ("pw-" and the name) with its derived permissions.
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
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	t.Cleanup(srv.Shutdown)
	return "nats://" + srv.Addr().String()
}

func as(user string) nats.Option { return nats.UserInfo(user, "pw-"+user) }

// On a bus with the derived permissions, the identity of another package
// (fix.v1) cannot answer discovery as the calculator — the bus refuses it
// the calculator's INFO subjects — and what it says on its own subject,
// claiming the calculator's tools with a wrong hash, quarantines nothing
// and is logged.
func TestAnotherPackagesIdentityCannotQuarantineTheCalculatorOnAPermittedBus(t *testing.T) {
	c, err := builder.FromRoots(context.Background(), "../../testdata/records/proto", "../../../examples/calculator/proto")
	if err != nil {
		t.Fatal(err)
	}
	g, err := catalogue.Load(c.Bytes, catalogue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	url := startPermittedBus(t, natsperm.Derive(c.Artifact))
	serveCalculator(t, url, calcv1.DescriptorHash, as(natsperm.ToolUser("calc.v1")))

	violations := make(chan error, 8)
	rogue := connect(t, url, as(natsperm.ToolUser("fix.v1")), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		violations <- err
	}))
	// The bus binds the name: fix.v1's identity may not be on the
	// calculator's INFO subjects.
	if _, err := rogue.Subscribe("$SRV.INFO.calc_v1_Calculator.*", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := rogue.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-violations:
		if !errors.Is(err, nats.ErrPermissionViolation) {
			t.Fatalf("the bus answered %v to fix.v1 subscribing to the calculator's INFO", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the bus let fix.v1's identity answer the calculator's discovery")
	}
	// On its own service's subject it may say anything.
	id := micro.ServiceIdentity{Name: "fix_v1_Records", ID: "ROGUE1", Version: "0.1.0"}
	pong, _ := json.Marshal(micro.Ping{ServiceIdentity: id, Type: micro.PingResponseType})
	info, _ := json.Marshal(rogueInfo(id.Name, id.ID))
	if _, err := rogue.Subscribe("$SRV.PING", func(m *nats.Msg) { _ = m.Respond(pong) }); err != nil {
		t.Fatal(err)
	}
	if _, err := rogue.Subscribe("$SRV.INFO.fix_v1_Records.ROGUE1", func(m *nats.Msg) { _ = m.Respond(info) }); err != nil {
		t.Fatal(err)
	}
	if err := rogue.Flush(); err != nil {
		t.Fatal(err)
	}

	var logs bytes.Buffer
	r := quarantine.New(connect(t, url, as(natsperm.GarmdUser), nats.CustomInboxPrefix(natsperm.InboxPrefix(natsperm.GarmdUser))),
		quarantine.Options{PingWait: 150 * time.Millisecond, InfoTimeout: 250 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	v := sweep(t, r, g)
	if reason, ok := v.Quarantined("calc.v1"); ok {
		t.Fatalf("fix.v1's identity quarantined calc.v1: %s", reason)
	}
	if reason, ok := v.Quarantined("fix.v1"); ok {
		t.Errorf("fix.v1 is quarantined for what it claimed of calc.v1: %s", reason)
	}
	if !v.Complete {
		t.Error("the round was not complete")
	}
	if l := logs.String(); !strings.Contains(l, "another package's tool") || !strings.Contains(l, "service=fix_v1_Records") || !strings.Contains(l, "package=calc.v1") {
		t.Errorf("the claim is not logged:\n%s", l)
	}
}
