package pending

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// The five kinds of key in the bucket. garmd writes RequestPrefix,
// AskPrefix, CallerPrefix and InboxPrefix keys, the approvals service
// DecisionPrefix keys; the bus permissions of each are built from these.
const (
	RequestPrefix  = "req."
	AskPrefix      = "ask."
	DecisionPrefix = "dec."
	// CallerPrefix keys, caller.<hash of the caller>.<id>, count a
	// caller's requests against MaxRequestsPerCaller.
	CallerPrefix = "caller."
	// InboxPrefix keys, inbox.<hash of the tenant>.<created>.<id>, index
	// a tenant's requests oldest first, so that an approver's inbox reads
	// its tenant's keys and no other's ([Store.Inbox]).
	InboxPrefix = "inbox."
)

func requestKey(id string) string  { return RequestPrefix + id }
func decisionKey(id string) string { return DecisionPrefix + id }

// askKey is the reuse key of r: the hex SHA-256 of its tenant, subject, act
// chain, tool and material digest.
func askKey(r Request) string {
	return AskPrefix + digest(r, true)
}

// callerKeys is the subject filter of r's caller's keys, and the key of
// r's own among them: the hex SHA-256 of its tenant, subject and act chain,
// encoded as askKey encodes them.
func callerKeys(r Request) (filter, key string) {
	who := CallerPrefix + digest(r, false) + "."
	return who + "*", who + r.ID
}

// digest hashes r's caller, and with call its tool and material digest
// too, each field prefixed with its length so that no two callers' fields
// can run together into the same bytes.
func digest(r Request, call bool) string {
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field(r.Tenant)
	field(r.Subject)
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(r.Act)))
	h.Write(n[:])
	for _, a := range r.Act {
		field(a)
	}
	if call {
		field(r.Tool)
		field(r.MaterialDigest)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// tenantInbox is the key prefix of tenant's inbox keys: the hex SHA-256 of
// the tenant, so any tenant string makes a valid key token.
func tenantInbox(tenant string) string {
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(tenant)))
	h.Write(n[:])
	h.Write([]byte(tenant))
	return InboxPrefix + hex.EncodeToString(h.Sum(nil)) + "."
}

// inboxPosition is where r sorts in its tenant's inbox: its creation time
// in Unix nanoseconds, zero-padded so that text order is time order, and
// its id.
func inboxPosition(r Request) string {
	return fmt.Sprintf("%020d.%s", r.Created.UnixNano(), r.ID)
}

// inboxKey is r's key in its tenant's inbox.
func inboxKey(r Request) string { return tenantInbox(r.Tenant) + inboxPosition(r) }
