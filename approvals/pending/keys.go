package pending

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// The four kinds of key in the bucket. garmd writes RequestPrefix,
// AskPrefix and CallerPrefix keys, the approvals service DecisionPrefix
// keys; the bus permissions of each are built from these.
const (
	RequestPrefix  = "req."
	AskPrefix      = "ask."
	DecisionPrefix = "dec."
	// CallerPrefix keys, caller.<hash of the caller>.<id>, count a
	// caller's requests against MaxRequestsPerCaller.
	CallerPrefix = "caller."
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
