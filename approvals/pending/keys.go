package pending

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// The three kinds of key in the bucket. garmd writes RequestPrefix and
// AskPrefix keys, the approvals service DecisionPrefix keys; the bus
// permissions of each are built from these.
const (
	RequestPrefix  = "req."
	AskPrefix      = "ask."
	DecisionPrefix = "dec."
)

func requestKey(id string) string  { return RequestPrefix + id }
func decisionKey(id string) string { return DecisionPrefix + id }

// askKey is the reuse key of r: the hex SHA-256 of its tenant, subject, act
// chain, tool and material digest, each prefixed with its length so that no
// two callers' fields can run together into the same bytes.
func askKey(r Request) string {
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
	field(r.Tool)
	field(r.MaterialDigest)
	return AskPrefix + hex.EncodeToString(h.Sum(nil))
}
