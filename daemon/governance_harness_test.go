package garmd_test

import (
	"context"
	"fmt"
	"github.com/garm-dev/garm/runtime/garmtool"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/catalogue-builder/builder"
	garmd "github.com/garm-dev/garm/daemon"
	"github.com/garm-dev/garm/devkit/idp"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/toolbind"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

const (
	payPath    = "/appr.v1.Payments/Pay"
	exportPath = "/appr.v1.Payments/Export"
	cancelPath = "/appr.v1.Payments/Cancel"
	payer      = "user:paula@acme.example"
	// spentTTL is how long the test bucket keeps a spent grant: longer than
	// Pay's ceiling (300 s) and the skew.
	spentTTL = 10 * time.Minute
)

// governedCatalogue is the fixture catalogue plus the approvals fixture,
// once per test binary.
var governedCatalogue = sync.OnceValues(func() ([]byte, error) {
	c, err := builder.FromRoots(context.Background(), "testdata/records/proto", "../examples/calculator/proto", "testdata/approvals/proto")
	if err != nil {
		return nil, err
	}
	return c.Bytes, nil
})

// startGovernedStack is a stack whose catalogue declares approval grants,
// audit and notification, with every optional step on.
func startGovernedStack(t testing.TB, opts ...stackOption) *stack {
	t.Helper()
	return newStack(t, true, opts...)
}

// withGovernance turns on grants (from the dev IdP, the stack's one
// issuer), the audit sink (indefinite retention) and notify.
func withGovernance() stackOption {
	return func(c *garmd.Config) {
		c.GrantIssuer = c.Issuers[0]
		indefinite := time.Duration(0)
		c.AuditStreamRetention = &indefinite
		c.Notify = true
	}
}

// createGovernanceStreams creates what the optional steps write to, as an
// operator (or the dev stack) would: the audit and notify streams and the
// spent-grant bucket.
func createGovernanceStreams(t testing.TB, js jetstream.JetStream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	createAuditStream(t, js)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "GARM_NOTIFY", Subjects: []string{"garm.v1.notify.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "GARM_GRANTS_SPENT", TTL: spentTTL, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	if err := garmd.FenceGrantsBucket(ctx, js); err != nil {
		t.Fatal(err)
	}
	if _, err := pending.Ensure(ctx, js, 1); err != nil {
		t.Fatal(err)
	}
}

func createAuditStream(t testing.TB, js jetstream.JetStream) {
	t.Helper()
	recreate(t, func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{
			Name: "GARM_AUDIT", Subjects: []string{"garm.v1.audit.>"}, Storage: jetstream.FileStorage, Discard: jetstream.DiscardNew,
		})
		return err
	})
}

// recreate creates a stream or bucket, which a test may have deleted a
// moment before: the server can refuse to create its store again until it
// has finished removing the old one, so a refusal is retried, bounded.
func recreate(t testing.TB, create func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	for {
		err := create(ctx)
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal(err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// paymentsService serves appr.v1.Payments and counts what it served.
type paymentsService struct {
	paid, exported, cancelled atomic.Uint32
	// grantJTI is the grant_jti of the last payment's invocation.
	grantJTI atomic.Value
}

func startPaymentsService(t testing.TB, url string, opts ...garmtool.Option) *paymentsService {
	t.Helper()
	p := &paymentsService{}
	_ = serveServiceOf(t, governedCatalogue, url, "payments", "appr.v1.Payments", "appr.v1", p.handler, opts...)
	return p
}

func (p *paymentsService) handler(method string, out protoreflect.MessageDescriptor) toolbind.Handler {
	return func(ctx context.Context, req proto.Message) (proto.Message, error) {
		in := req.ProtoReflect()
		res := dynamicpb.NewMessage(out)
		switch method {
		case "Pay":
			p.grantJTI.Store(wire.InvocationFrom(ctx).GetGrantJti())
			n := p.paid.Add(1)
			set(res, "payment_id", fmt.Sprintf("pay-%d", n))
			res.Set(out.Fields().ByName("sent"), protoreflect.ValueOfUint32(n))
		case "Export":
			res.Set(out.Fields().ByName("served"), protoreflect.ValueOfUint32(p.exported.Add(1)))
		case "Cancel":
			p.cancelled.Add(1)
			set(res, "payment_id", str(in, "payment_id"))
		}
		return res, nil
	}
}

// payment is a Pay request body and the material an approver is shown for
// it (design 7.9's canonical texts).
const payment = `{"amountMinorUnits": "125000", "currencyCode": "GBP", "beneficiaryIban": "GB29NWBK60161331926819", "memo": "invoice 7"}`

var paymentMaterial = map[string]string{
	"amount_minor_units": "125000",
	"currency_code":      "GBP",
	"beneficiary_iban":   "GB29NWBK60161331926819",
}

// grant is an approval grant minted by the dev IdP.
func (s *stack) grant(approver, tool, subject string, material map[string]string, task string) string {
	s.t.Helper()
	g, err := s.idp.Grant(idp.GrantRequest{Approver: approver, Tool: tool, Subject: subject, Material: material, Task: task})
	if err != nil {
		s.t.Fatal(err)
	}
	return g
}

// startReplica starts a second garmd with the stack's configuration on the
// same bus: another replica of the same plane.
func (s *stack) startReplica() string {
	s.t.Helper()
	return s.startReplicaOn(s.cfg.NATS).url
}

// replica is one more garmd of a stack's plane; it logs to the stack's log.
type replica struct {
	url, adminURL string
	stop          func()
}

// startReplicaOn starts a garmd with the stack's configuration connected
// to natsURL. It stops when the test ends, or earlier by stop, which waits
// for it.
func (s *stack) startReplicaOn(natsURL string) *replica {
	s.t.Helper()
	cfg := s.cfg
	cfg.NATS = natsURL
	ctx, cancel := context.WithCancel(context.Background())
	d, err := garmd.New(ctx, cfg)
	if err != nil {
		cancel()
		s.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					s.t.Errorf("the replica stopped with %v", err)
				}
			case <-time.After(waitTimeout + cfg.ToolTimeout):
				s.t.Error("the replica did not stop")
			}
		})
	}
	s.t.Cleanup(stop)
	return &replica{url: "http://" + d.Addr().String(), adminURL: "http://" + d.AdminAddr().String(), stop: stop}
}

// streamRows reads every Event on stream so far (a stream of one Event per
// message: audit or notify), with each message's subject and Nats-Msg-Id.
func (s *stack) streamRows(stream string) []streamRow {
	s.t.Helper()
	nc, err := nats.Connect(s.bus.url)
	if err != nil {
		s.t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		s.t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	var out []streamRow
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		msg, err := st.GetMsg(ctx, seq)
		if err != nil {
			continue
		}
		e := &ledgerv1.Event{}
		if err := proto.Unmarshal(msg.Data, e); err != nil {
			s.t.Fatalf("%s message %d is not an Event: %v", stream, seq, err)
		}
		out = append(out, streamRow{subject: msg.Subject, msgID: msg.Header.Get("Nats-Msg-Id"), event: e})
	}
	return out
}

type streamRow struct {
	subject, msgID string
	event          *ledgerv1.Event
}
