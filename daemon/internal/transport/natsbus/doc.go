// Package natsbus implements transport.Requester with NATS request/reply on
// a connection garmd owns. It maps the bus's answers onto the port's: a
// reply with micro's error headers is an error reply, "no responders" is
// transport.ErrNoResponders, a passed deadline is transport.ErrTimeout.
//
// It owns no connection lifecycle beyond reporting whether the bus is
// connected (for readiness); garmd connects, drains and closes.
package natsbus
