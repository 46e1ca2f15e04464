package garmd_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/signature"
	garmd "github.com/garm-dev/garm/daemon"
)

// refusedWith waits for a refusal of the artifact refused naming check (or
// one of several, "a|b") and checks that it names serving as what stays,
// and that serving still answers.
func refusedWith(t *testing.T, s *stack, check, refused, serving string) {
	t.Helper()
	var got map[string]any
	eventually(t, fmt.Sprintf("the refusal of %s (%s)", refused, check), func() bool {
		for _, r := range s.refusals() {
			if r["refused_digest"] == refused && strings.Contains("|"+check+"|", fmt.Sprintf("|%v|", r["check"])) {
				got = r
				return true
			}
		}
		return false
	})
	if got["serving_digest"] != serving {
		t.Errorf("the refusal of %s names %v serving, want %s", refused, got["serving_digest"], serving)
	}
	if d := s.servingDigest(); d != serving {
		t.Errorf("after the refusal of %s (%s) %s answers, want %s", refused, check, d, serving)
	}
}

func TestEachHostileCatalogueOverS3IsRefusedAndThePreviousGenerationServes(t *testing.T) {
	store := startCatalogueStore(t)
	keys := newSigningKeys(t)
	owner, security := newSigner(t, signature.AlgEdDSA), newSigner(t, signature.AlgEdDSA)
	stranger, p256 := newSigner(t, signature.AlgEdDSA), newSigner(t, signature.AlgES256)
	keys.publishKeys(groupOf{owner, "owners"}, groupOf{security, "security"})
	base := must(t, fixtureCatalogue)
	v1 := variant(t, base, "v1")
	s := startStack(t, withSignedS3Catalogue(store, keys, v1, sign(t, v1, 1, owner, security), shortPoll), func(c *garmd.Config) {
		c.CatalogueMinSigners = 2
	})
	v2 := variant(t, base, "v2")
	serving := store.publishPair(v2, sign(t, v2, 2, owner, security))
	eventually(t, "v2 served", func() bool { return s.servingDigest() == serving })

	next := func(i int) []byte { return variant(t, base, fmt.Sprintf("hostile %d", i)) }
	twice := envelope(t, next(7), 3, owner)
	twice.Signatures = append(twice.Signatures, twice.Signatures[0])
	confused := envelope(t, next(6), 3, p256)
	confused.Signatures[0].KeyID = owner.KeyID() // an ES256 signature under an EdDSA key's id
	reencoded := func() []byte {
		var m map[string]any
		if err := json.Unmarshal(sign(t, next(4), 3, owner, security), &m); err != nil {
			t.Fatal(err)
		}
		// The statement re-serialized: the same members, in another order.
		payload, _ := base64.StdEncoding.DecodeString(m["payload"].(string))
		var st map[string]any
		if err := json.Unmarshal(payload, &st); err != nil {
			t.Fatal(err)
		}
		payload, _ = json.Marshal(st)
		m["payload"] = base64.StdEncoding.EncodeToString(payload)
		out, _ := json.MarshalIndent(m, "", " ")
		return out
	}()
	otherName := func() []byte {
		e, err := signature.Sign(signature.Statement{Catalogue: "another-catalogue", Digest: artifact.Digest(next(11)), Version: 9, SignedAt: time.Now()}, owner, security)
		if err != nil {
			t.Fatal(err)
		}
		return marshalEnvelope(t, e)
	}()
	cases := []struct {
		name      string
		data, env []byte
		check     string
	}{
		{"a signature over another artifact", next(1), sign(t, next(100), 3, owner, security), "digest_mismatch"},
		{"the artifact changed after signing", append(next(2)[:len(next(2)):len(next(2))], 0), sign(t, next(2), 3, owner, security), "digest_mismatch"},
		{"a truncated envelope", next(3), sign(t, next(3), 3, owner, security)[:120], "malformed"},
		{"a re-encoded envelope", next(4), reencoded, "malformed|bad_signature"},
		{"an unknown key id", next(5), sign(t, next(5), 3, stranger), "unknown_key"},
		{"algorithm confusion", next(6), marshalEnvelope(t, confused), "bad_signature"},
		{"one key signing twice for two signers", next(7), marshalEnvelope(t, twice), "too_few_signers"},
		{"a replay of an older signed version", v1, sign(t, v1, 1, owner, security), "rollback"},
		{"the served version over other bytes", next(9), sign(t, next(9), 2, owner, security), "version_reused"},
		{"signed for another catalogue", next(11), otherName, "other_catalogue"},
		{"an artifact without its envelope", next(10), nil, "unsigned"},
	}
	hostile := map[string]bool{}
	for _, c := range cases {
		if c.env == nil {
			store.deleteEnvelope()
			store.publish(c.data)
		} else {
			store.publishPair(c.data, c.env)
		}
		hostile[artifact.Digest(c.data)] = true
		refusedWith(t, s, c.check, artifact.Digest(c.data), serving)
		if t.Failed() {
			t.Fatalf("at %q:\n%s", c.name, s.logs)
		}
	}
	// Still reloading: a good catalogue after them all is served.
	v3 := variant(t, base, "v3")
	good := store.publishPair(v3, sign(t, v3, 3, owner, security))
	eventually(t, "v3 served", func() bool { return s.servingDigest() == good })
	// A poll between a case's two writes may see its artifact beside the
	// previous case's envelope, itself hostile, and refuse that pair too;
	// nothing but the hostile artifacts is ever refused.
	for _, r := range s.refusals() {
		if !hostile[fmt.Sprint(r["refused_digest"])] {
			t.Errorf("a refusal of something not published as hostile: %v", r)
		}
	}
}

func TestAHalfPublishedPairIsANotYetAndNeverARefusal(t *testing.T) {
	store := startCatalogueStore(t)
	keys := newSigningKeys(t)
	owner := newSigner(t, signature.AlgEdDSA)
	keys.publishKeys(groupOf{owner, ""})
	base := must(t, fixtureCatalogue)
	v1 := variant(t, base, "v1")
	polls := store.countPolls(t)
	// A poll long enough that the test's second write lands before the
	// poll after the one that saw the first.
	s := startStack(t, withSignedS3Catalogue(store, keys, v1, sign(t, v1, 1, owner), time.Second))
	const notYet = "garmd: the catalogue and its signatures do not match yet, as while one is being published; the serving generation stays"

	// The artifact first, as the publisher writes it: its envelope not yet.
	v2 := variant(t, base, "v2")
	store.publish(v2)
	eventually(t, "the artifact seen without its envelope", func() bool { return len(s.logRecords(notYet)) == 1 })
	store.publishEnvelope(sign(t, v2, 2, owner))
	eventually(t, "v2 served", func() bool { return s.servingDigest() == artifact.Digest(v2) })

	// The reverse: an envelope for an artifact not there yet.
	v3 := variant(t, base, "v3")
	store.publishEnvelope(sign(t, v3, 3, owner))
	eventually(t, "the envelope seen without its artifact", func() bool { return len(s.logRecords(notYet)) == 2 })
	store.publish(v3)
	eventually(t, "v3 served", func() bool { return s.servingDigest() == artifact.Digest(v3) })
	if n := len(s.refusals()); n != 0 {
		t.Fatalf("%d refusals of a publication in progress:\n%s", n, s.logs)
	}

	// A pair that stays half published is refused once, not on every poll.
	v4 := variant(t, base, "v4")
	store.publish(v4)
	eventually(t, "the refusal", func() bool { return len(s.refusals()) == 1 })
	after := polls.Load()
	eventually(t, "three more polls", func() bool { return polls.Load() >= after+3*2 })
	if n := len(s.refusals()); n != 1 {
		t.Errorf("a half-published pair was refused %d times, want once:\n%s", n, s.logs)
	}
	if d := s.servingDigest(); d != artifact.Digest(v3) {
		t.Errorf("%s serving, want v3", d)
	}
}

func TestRotatingKeysOverS3AcceptsTheNewKeyAndThenRefusesTheOld(t *testing.T) {
	store := startCatalogueStore(t)
	keys := newSigningKeys(t)
	old, fresh := newSigner(t, signature.AlgEdDSA), newSigner(t, signature.AlgES256)
	keys.publishKeys(groupOf{old, ""})
	base := must(t, fixtureCatalogue)
	v1 := variant(t, base, "v1")
	s := startStack(t, withSignedS3Catalogue(store, keys, v1, sign(t, v1, 1, old), shortPoll))

	// A new key added: catalogues it signs are accepted.
	keys.publishKeys(groupOf{old, ""}, groupOf{fresh, ""})
	v2 := variant(t, base, "v2")
	store.publishPair(v2, sign(t, v2, 2, fresh))
	eventually(t, "v2, signed by the new key, served", func() bool { return s.servingDigest() == artifact.Digest(v2) })

	// The old key removed: a catalogue signed only by it is refused.
	keys.publishKeys(groupOf{fresh, ""})
	v3 := variant(t, base, "v3")
	store.publishPair(v3, sign(t, v3, 3, old))
	refusedWith(t, s, "unknown_key", artifact.Digest(v3), artifact.Digest(v2))

	// A key set of token keys is no catalogue key set: nothing is judged,
	// and what serves stays.
	tokenKey, err := signature.PublicJWK(fresh.Public(), "")
	if err != nil {
		t.Fatal(err)
	}
	tokenKey["use"] = "sig"
	raw, _ := json.Marshal(map[string]any{"keys": []any{tokenKey}})
	keys.writeRaw(raw)
	v35 := variant(t, base, "v3.5")
	store.publishPair(v35, sign(t, v35, 5, fresh))
	eventually(t, "the unusable key set said", func() bool {
		return len(s.logRecords("garmd: the catalogue key set cannot be used; the serving generation stays")) > 0
	})
	if d := s.servingDigest(); d != artifact.Digest(v2) {
		t.Errorf("with a token key set, %s serves, want v2", d)
	}
	keys.publishKeys(groupOf{fresh, ""})

	// Signed by both, it verifies: the old key's signature counts for nothing.
	v4 := variant(t, base, "v4")
	store.publishPair(v4, sign(t, v4, 6, old, fresh))
	eventually(t, "v4 served", func() bool { return s.servingDigest() == artifact.Digest(v4) })
	if !strings.Contains(s.logs.String(), `"version":6`) {
		t.Errorf("the reload does not name the version:\n%s", s.logs)
	}
}
