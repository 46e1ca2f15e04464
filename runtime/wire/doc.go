// Package wire is the hop contract between garmd and tool services: how a
// tool's method maps to a NATS subject, its queue group and its micro service
// and endpoint names. garmd and the tool runtime both derive these names here,
// so the two sides cannot disagree.
//
// It holds names and pure functions only; it opens no connection.
package wire
