package jetstream_test

import (
	"context"
	"errors"
	"testing"
	"time"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// waitBound bounds every wait in these tests; none should come near it.
const waitBound = 20 * time.Second

// connect is a JetStream client of srv that reconnects, closed when the
// test ends.
func connect(t testing.TB, srv *garmtooltest.Server) jetstream.JetStream {
	t.Helper()
	_, js := garmtooltest.ConnectJetStream(t, srv.URL())
	return js
}

// auditStream is a configuration CheckStream accepts for every assertion.
func auditStream() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:     wire.AuditStream,
		Subjects: []string{wire.AuditStreamSubjects},
		Storage:  jetstream.FileStorage,
		Discard:  jetstream.DiscardNew,
	}
}

func createStream(t testing.TB, js jetstream.JetStream, cfg jetstream.StreamConfig) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
}

// stored is one message of the audit stream, decoded.
type stored struct {
	subject string
	msgID   string
	row     *ledgerv1.Event
}

// readStream is every message of the audit stream, in stream order.
func readStream(t testing.TB, js jetstream.JetStream) []stored {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	stream, err := js.Stream(ctx, wire.AuditStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []stored
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		msg, err := stream.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var e ledgerv1.Event
		if err := proto.Unmarshal(msg.Data, &e); err != nil {
			t.Fatalf("message %d of the audit stream is not an Event: %v", seq, err)
		}
		out = append(out, stored{subject: msg.Subject, msgID: msg.Header.Get(jetstream.MsgIDHeader), row: &e})
	}
	return out
}

// auditRow is an audit row with the columns a write depends on, and enough
// others to show the row arrives whole.
func auditRow(id, outcome string) *ledgerv1.Event {
	return &ledgerv1.Event{
		EventId:               id,
		Time:                  timestamppb.New(time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)),
		Tenant:                "acme",
		App:                   "garmd",
		Tags:                  map[string]string{"task_id": "t-9"},
		Outcome:               outcome,
		Tool:                  "payments.v1.Payments.Pay",
		PrincipalSubject:      "user:alice",
		ChainDepth:            1,
		CompartmentsEffective: []string{"finance"},
		CatalogueDigest:       "sha256:feed",
		Method:                "/payments.v1.Payments/Pay",
	}
}
