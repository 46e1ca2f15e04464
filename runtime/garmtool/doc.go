// Package garmtool serves tools over NATS micro: the runtime a tool service
// runs its generated bindings on.
//
//	svc := garmtool.New("calc", "0.1.0", garmtool.WithLogger(logger))
//	if err := calcv1.ServeCalculator(svc, calculator.Calculator{}); err != nil { … }
//	err := svc.Run(ctx, nc) // serves until ctx is done, then drains
//
// It owns what happens between the bus and a handler. Each tool is served on
// the subject and queue group runtime/wire derives from its method, in a
// micro service named after its proto service, whose $SRV.INFO metadata
// carries the package's descriptor hash and contract version so garmd can
// check that a service implements the contract its catalogue describes.
// WithConcurrency(n) registers n such instances; a handler runs synchronously
// on its instance's subscription, so n bounds how many requests per tool run
// at once, and the NATS server balances across the instances.
//
// Before a handler runs, a request must carry exactly one valid
// Garm-Invocation header (else 400 "missing invocation context"); the service
// must not be shutting down (else 503); the invocation's deadline must not
// have passed (else 429, so a request that waited in a queue too long is shed
// rather than served late); and the body must decode into the tool's request
// with no field the contract does not declare (else 400, the same static
// message for every such request, and a warning in the service's log naming
// the tool, the message it expects and why the body is not one). The handler gets
// the invocation on its context (wire.InvocationFrom) and the deadline as the
// context's. A toolbind.CodedError it returns, bare or wrapped, is published
// with its code when that is a refusal code; anything else that is not a
// response is an unclassified 500. A panic is recovered, logged and answered
// 500. A request without a reply subject is dropped: no one could learn its
// outcome.
//
// It refuses at registration what would be wrong at run time: two tools on
// one subject, tools of two proto packages (or contract versions) in one
// process, a ToolRef whose subject is not its method's. A Service is single
// use; Run refuses a second time.
//
// It does not authenticate, authorise, validate or redact: garmd does that
// before a request reaches the bus, and a tool returns its full answer. It
// never reaches garmd's code or the NATS server; runtime/garmtooltest runs
// a Service against an embedded server for tests.
package garmtool
