// Package versions keeps, on the bus, the highest signed catalogue version
// each catalogue name has served (wire.CatalogueVersionsBucket), so that
// every garmd replica, and a garmd after a restart, refuses an older one.
//
// The record of a name is read with its revision and written only by
// compare-and-set on that revision (Advance): a write another replica's
// write overtook is not applied, and the decision is taken again on what
// that replica wrote, so two replicas racing cannot lower the record, and
// the one explicit rollback an operator allows is a write like any other
// (decision 0136).
//
// The bucket is fenced (Fence): its stream refuses purges, roll-ups and
// message deletes, any of which would forget the highest version. A delete
// marker is a write, which no stream setting refuses to an identity allowed
// to write the bucket, so a record whose last write is one is reported
// (ErrForgotten), never read as a name that has served nothing. Open checks
// the fence and names the fix; it creates and changes nothing. Ensure
// (`garm bus init`, the dev plane, tests) creates and fences.
//
// Deliberately not here: deciding whether a candidate may be served (the
// caller's Decide), and signatures.
package versions
