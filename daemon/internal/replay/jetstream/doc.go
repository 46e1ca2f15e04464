// Package jetstream spends approval grants in the JetStream key-value
// bucket wire.GrantsSpentBucket, which every garmd replica shares (design
// 7.9). A spend is one atomic create of the grant's key (replay.Key): the
// server accepts exactly one create of a key, so of any number of replicas
// presenting one grant at once, one spends it and the others are told it
// was spent. The value is when it was spent, for an operator reading the
// bucket; nothing reads it back.
//
// What it refuses: a key that exists, as replay.ErrSpent. Every other
// failure — no server, a timeout, a bucket that is full or sealed — is
// returned wrapped, and the caller refuses the grant (fail closed). A
// create whose acknowledgement is lost may have spent the key; refusing the
// call then costs the approver a new grant, never a second use.
//
// CheckBucket says at startup what keeps the bucket from doing this job:
// missing; backed by memory, which forgets every spent grant when the
// server restarts; sealed; or discarding old keys when full, which forgets
// spent grants before they expire. It reads the bucket's TTL back so that
// garmd can refuse a tool whose grants outlive it. Like the ledger and
// audit streams, the bucket is the operator's: garmd creates and changes
// nothing, and owns no connection.
package jetstream
