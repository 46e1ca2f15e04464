package main

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/natsperm"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
)

// hostile is a connection to the stack's bus as one identity, with the
// server's asynchronous errors — its permission violations — on errs.
type hostile struct {
	nc   *nats.Conn
	errs chan error
}

func connectHostile(t *testing.T, s *Stack, identity string) *hostile {
	t.Helper()
	h := &hostile{errs: make(chan error, 16)}
	h.nc = connectAs(t, s, identity, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case h.errs <- err:
		default:
		}
	}))
	return h
}

// refused waits for the server to refuse what was just tried with a
// permissions violation naming subject.
func (h *hostile) refused(t *testing.T, subject string) {
	t.Helper()
	if err := h.nc.Flush(); err != nil && !errors.Is(err, nats.ErrPermissionViolation) {
		t.Fatal(err)
	}
	select {
	case err := <-h.errs:
		if !errors.Is(err, nats.ErrPermissionViolation) || !strings.Contains(err.Error(), subject) {
			t.Fatalf("the server answered %v, want a permissions violation for %q", err, subject)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("the server did not refuse %q within %s", subject, waitTimeout)
	}
}

func (h *hostile) publish(t *testing.T, subject string, header nats.Header) {
	t.Helper()
	if err := h.nc.PublishMsg(&nats.Msg{Subject: subject, Header: header, Data: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	h.refused(t, subject)
}

func (h *hostile) subscribe(t *testing.T, subject, queue string) {
	t.Helper()
	if _, err := h.nc.QueueSubscribe(subject, queue, func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	h.refused(t, subject)
}

// TestNoOneButGarmdReachesToolsLedgerOrSpentGrants tries, with real
// clients on the dev stack's secured bus, what the attack suite did on an
// open one — call a tool around garmd, read the ledger, write a row,
// forget a spent grant — as an agent and as a tool package's own
// services, and sees the server refuse every one; then garmd still calls
// tools through the plane.
func TestNoOneButGarmdReachesToolsLedgerOrSpentGrants(t *testing.T) {
	s := startStack(t, testOptions(t))
	const add, calcQueue = "calc.v1.Calculator.Add", "calc.v1.Calculator"
	spentKey := "$KV." + wire.GrantsSpentBucket + ".some-spent-grant"
	deleteMarker := nats.Header{"KV-Operation": []string{"DEL"}}
	purgeMarker := nats.Header{"KV-Operation": []string{"PURGE"}, "Nats-Rollup": []string{"sub"}}
	purgeAPI := "$JS.API.STREAM.PURGE.KV_" + wire.GrantsSpentBucket
	deleteAPI := "$JS.API.STREAM.MSG.DELETE.KV_" + wire.GrantsSpentBucket

	for _, identity := range []string{AgentIdentity, natsperm.ToolUser("accounts.v1")} {
		t.Run(identity, func(t *testing.T) {
			for _, attempt := range []struct {
				name string
				try  func(t *testing.T, h *hostile)
			}{
				{"calls a tool directly", func(t *testing.T, h *hostile) {
					h.publish(t, add, nats.Header{wire.InvocationHeader: []string{"forged"}})
				}},
				{"serves a tool's calls in its place", func(t *testing.T, h *hostile) { h.subscribe(t, add, calcQueue) }},
				{"reads the ledger", func(t *testing.T, h *hostile) { h.subscribe(t, wire.LedgerStreamSubjects, "") }},
				{"reads the ledger through JetStream", func(t *testing.T, h *hostile) {
					h.publish(t, "$JS.API.CONSUMER.CREATE."+wire.LedgerStream, nil)
				}},
				{"publishes a ledger row", func(t *testing.T, h *hostile) { h.publish(t, "garm.v1.ledger.bank.forged", nil) }},
				{"publishes an audit row", func(t *testing.T, h *hostile) { h.publish(t, "garm.v1.audit.bank.forged", nil) }},
				{"spends a grant", func(t *testing.T, h *hostile) { h.publish(t, spentKey, nil) }},
				{"deletes a spent grant", func(t *testing.T, h *hostile) { h.publish(t, spentKey, deleteMarker) }},
				{"purges a spent grant", func(t *testing.T, h *hostile) { h.publish(t, spentKey, purgeMarker) }},
				{"purges the spent-grant bucket", func(t *testing.T, h *hostile) { h.publish(t, purgeAPI, nil) }},
				{"deletes a message of the bucket", func(t *testing.T, h *hostile) { h.publish(t, deleteAPI, nil) }},
				{"reads garmd's replies", func(t *testing.T, h *hostile) { h.subscribe(t, natsperm.InboxPrefix(natsperm.GarmdUser)+".>", "") }},
			} {
				t.Run(attempt.name, func(t *testing.T) { attempt.try(t, connectHostile(t, s, identity)) })
			}
		})
	}

	t.Run("garmd itself cannot purge or delete in the spent-grant bucket", func(t *testing.T) {
		h := connectHostile(t, s, natsperm.GarmdUser)
		h.publish(t, purgeAPI, nil)
		h.publish(t, deleteAPI, nil)
	})

	t.Run("garmd still calls the tools", func(t *testing.T) {
		c := newClient(t, s)
		d := bankDemo()
		got := c.call("/calc.v1.Calculator/Add", c.token(d.outsider, ""), `{"a": 40, "b": 2.5}`)
		if got.status != http.StatusOK || !strings.Contains(got.body, "42.5") {
			t.Fatalf("a call through garmd answered %d %s", got.status, got.body)
		}
	})
}
