// Package s3test starts a real S3-compatible server for tests: versitygw, pinned at
// [VersitygwVersion], serving a posix directory from t.TempDir() on a random 127.0.0.1 port with
// credentials made up at run time.
//
// It owns the server's whole life: finding the binary, choosing the port and the credentials,
// waiting until the server answers a signed request, and stopping it (by the process id it
// started) when the test ends or when [Server.Stop] is called. It also hands tests the two ways
// code meets a store: [Server.Env] points the AWS SDK's default configuration chain at the
// server, exactly as an operator would with AWS_ENDPOINT_URL, and [Server.Client] gives a
// path-style client for assertions.
//
// It refuses to run without the binary: a missing or differently versioned versitygw fails the
// test with the command that installs the pinned one (`make tools`), never a skip. It listens on
// loopback only, and it never reads a developer's AWS configuration: the process gets only the
// flags it is given, and [Server.Env] points the SDK's shared config and credentials files at
// paths that do not exist.
//
// Why a real server: the code under test signs requests, sends checksums, reads ETags and uses
// path-style addressing, and an in-process fake would agree with whatever it was told. A real
// store checks signatures and computes ETags itself, so a test that passes here means the bytes
// on the wire were right (docs/decisions/0015-s3-compatible-test-server.md).
//
// This is development-only support code: it imports testing, and nothing garmd links may import
// it. There is deliberately no in-memory fallback.
package s3test
