package approvals

import (
	"context"
	"errors"
	"fmt"
	"time"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
)

// auditTimeout bounds one audit write.
const auditTimeout = 10 * time.Second

// AuditStream writes decision rows to GARM_AUDIT, each on wire.AuditSubject(tenant, AuditApp),
// acknowledged by the stream before Write returns.
type AuditStream struct {
	js jetstream.JetStream
}

var _ Auditor = (*AuditStream)(nil)

// NewAuditStream writes to GARM_AUDIT through js.
func NewAuditStream(js jetstream.JetStream) *AuditStream { return &AuditStream{js: js} }

// Write publishes e and returns once GARM_AUDIT acknowledged it. Its event id is the message id,
// so a write repeated after a lost answer is kept once.
func (a *AuditStream) Write(ctx context.Context, e *ledgerv1.Event) error {
	if e.GetEventId() == "" || e.GetOutcome() == "" {
		return errors.New("approvals: an audit row needs an event id and an outcome")
	}
	data, err := proto.Marshal(e)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, auditTimeout)
	defer cancel()
	msg := &nats.Msg{Subject: wire.AuditSubject(e.GetTenant(), e.GetApp()), Data: data}
	if _, err := a.js.PublishMsg(ctx, msg, jetstream.WithMsgID(e.GetEventId()), jetstream.WithExpectStream(wire.AuditStream)); err != nil {
		return fmt.Errorf("the %s row was not acknowledged by %s: %w", e.GetOutcome(), wire.AuditStream, err)
	}
	return nil
}
