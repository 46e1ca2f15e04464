package busoutcometest

import (
	"context"
	"sync/atomic"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// LostAnswers is a JetStream client whose next publishes lose their
// answers, as when a server, a route or a stream's leader goes away
// between a write and its acknowledgement. Everything else is the client
// it wraps.
type LostAnswers struct {
	jetstream.JetStream
	lose atomic.Int32
	// Landed, when set, is what reaches the server in place of a publish
	// whose answer is lost (nothing, another writer's message…); nil
	// publishes the message as sent.
	Landed func(ctx context.Context, msg *nats.Msg) error
}

// Losing is js with the answers of its next n publishes lost.
func Losing(js jetstream.JetStream, n int32) *LostAnswers {
	l := &LostAnswers{JetStream: js}
	l.lose.Store(n)
	return l
}

// PublishMsg publishes msg; while answers are being lost, it returns
// nats.ErrTimeout whatever reached the server.
func (l *LostAnswers) PublishMsg(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	if l.lose.Add(-1) < 0 {
		return l.JetStream.PublishMsg(ctx, msg, opts...)
	}
	var err error
	if l.Landed != nil {
		err = l.Landed(ctx, msg)
	} else {
		_, err = l.JetStream.PublishMsg(ctx, msg, opts...)
	}
	if err != nil {
		return nil, err
	}
	return nil, nats.ErrTimeout
}
