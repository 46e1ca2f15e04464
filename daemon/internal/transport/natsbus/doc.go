// Package natsbus implements transport.Requester with NATS request/reply on
// a connection garmd owns. It maps the bus's answers onto the port's: a
// reply with micro's error headers is an error reply, "no responders" is
// transport.ErrNoResponders, a passed deadline is transport.ErrTimeout, and
// a publish the server refuses for lack of permission is
// transport.ErrForbidden — at once, when the server says so, not at the
// deadline.
//
// The server says it asynchronously (an -ERR that nats.go hands the
// connection's error handler), so the Requester keeps its own replies (one
// wildcard subscription under the connection's inbox prefix and a table of
// the requests waiting) and chains the connection's error handler to end
// the requests a violation names. It owns no connection lifecycle beyond
// that and reporting whether the bus is connected (for readiness); garmd
// connects, drains and closes.
package natsbus
