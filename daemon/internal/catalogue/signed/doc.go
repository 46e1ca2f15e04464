// Package signed is garmd's gate for signed catalogues (issue 36 §2,
// decision 0135): with --catalogue-keys, no catalogue is served — at start
// or on a reload — unless its envelope verifies against the catalogue key
// set, its signers meet the policy, and its version is not below the
// highest the deployment has served.
//
// Read loads the key set (Keys: a JWKS file or URL, read afresh for every
// pair considered, so a rotation takes effect on the next pair), checks the
// policy can be met with it, and reads the pair with signature.ReadPair
// and signature.Policy. Judge compares the statement's version with the
// bus's record (package versions) and writes nothing; Commit writes it by
// compare-and-set once the catalogue has loaded and mounted, judging again
// on what the bus holds then. The version rule (decision 0136): a name
// never recorded or a higher version is recorded; the recorded version over
// the recorded bytes is served without a write (a restart); the recorded
// version over other bytes, and any lower version, is refused — unless it
// is exactly the version --catalogue-allow-rollback-to names and that
// rollback is not recorded as made, which is then recorded (with the
// version it lowered the record from), so it is made once however long the
// flag stays set. The statement must name the catalogue configured
// (--catalogue-name) or, without one, the catalogue serving.
//
// What it refuses is a *Refusal naming the check (signature.Reason's
// names, CheckRollback, CheckVersionReused, CheckOtherCatalogue) and the
// artifact's digest, which garmd logs as it logs every refused reload. A
// key set that cannot be used is ErrKeys: nothing was judged, and garmd
// keeps what it serves and asks again. Any other error is a store or the
// bus not answering.
//
// Deliberately not here: the envelope's format and the verification of a
// signature (catalogue-builder/signature), fetching the artifact (package
// source), what a refusal does to a start or a reload (garmd), and logging.
package signed
