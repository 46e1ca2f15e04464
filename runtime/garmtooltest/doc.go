// Package garmtooltest is the harness for testing a tool service: it starts
// an embedded NATS server on a random loopback port, runs the
// garmtool.Service under test on it, and calls tools the way garmd does —
// binary request, Garm-Invocation header with an invocation context the test
// can shape — returning the response or the coded refusal as an error that
// names the tool and the request's type and wraps a *toolbind.CodedError.
//
//	svc := garmtool.New("calc", "0.1.0")
//	if err := calcv1.ServeCalculator(svc, calculator.Calculator{}); err != nil {
//		t.Fatal(err)
//	}
//	h := garmtooltest.Start(t, svc)
//	var out calcv1.DivideResponse
//	err := h.Call(ctx, calcv1.CalculatorTool("divide"), &calcv1.DivideRequest{…}, &out,
//		garmtooltest.WithTenant("acme"))
//
// It tests the service exactly as it is served (same runtime, same server
// software, real sockets) rather than calling handlers directly, so a test
// sees what garmd would see. The raw connections are exposed for requests
// garmd would never send.
//
// For code that talks to NATS itself rather than serving tools (garmd's
// ledger, audit sink, notify and spent-grant bucket, and garmd end to end),
// StartServer and StartJetStream give the server alone, and ConnectJetStream
// a client of it that reconnects. A JetStream server keeps its store in a
// directory of the test's, so its streams and buckets survive Restart, or
// Stop and Start around calls made while it is gone, as a real server's
// would; a plain server's Restart comes back empty. StartCluster runs a
// three-node (or n-node) cluster with JetStream on loopback, for tests of
// replication, node loss and quorum.
//
// It is for tests only: it is the one package under runtime/ that links the
// NATS server, and nothing a service ships may import it. It does not run
// garmd: authentication, visibility, validation and redaction are garmd's,
// and are tested there.
package garmtooltest
