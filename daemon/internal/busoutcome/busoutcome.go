package busoutcome

import (
	"errors"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NotWritten reports whether err, from a JetStream publish or API request
// on a connection without a reconnect buffer, says the write definitely did
// not happen: the connection was away or closed, so nothing was sent, or
// nothing on the bus was listening, so nothing took it. Any other error —
// a timeout above all, and a leader change — leaves the outcome unknown.
func NotWritten(err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, nats.ErrReconnectBufExceeded),
		errors.Is(err, nats.ErrConnectionClosed),
		errors.Is(err, nats.ErrConnectionDraining),
		errors.Is(err, nats.ErrDisconnected),
		errors.Is(err, nats.ErrNoResponders),
		errors.Is(err, jetstream.ErrNoStreamResponse),
		errors.Is(err, nats.ErrInvalidConnection):
		return true
	}
	return false
}

// Refused reports whether err is the server's own answer refusing the
// write (an API error): definite, and not worth repeating unchanged.
func Refused(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr)
}
