package replay_test

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/replay"
)

// natsKey is what a NATS key-value key may hold (nats.go's own check).
var natsKey = regexp.MustCompile(`^[-/_=\.a-zA-Z0-9]+$`)

func TestKeySeparatesIssuerFromJTI(t *testing.T) {
	pairs := [][2]string{
		{"ab", "c"}, {"a", "bc"}, {"abc", ""}, {"", "abc"},
		{"https://idp.example", "g-1"}, {"https://idp.example/", "g-1"},
		{"https://idp.example", "g-1 "}, {"https://idp.example\x00", "g-1"},
		{"https://idp.example", "\x00g-1"}, {"", ""},
	}
	seen := map[string][2]string{}
	for _, p := range pairs {
		k := replay.Key(p[0], p[1])
		if other, dup := seen[k]; dup {
			t.Errorf("Key(%q, %q) = Key(%q, %q) = %s", p[0], p[1], other[0], other[1], k)
		}
		seen[k] = p
	}
}

func TestKeyIsStableLowercaseHexValidInABucket(t *testing.T) {
	for _, p := range [][2]string{{"https://idp.example", "g-1"}, {"", ""}, {"iss", "jti.with.dots and spaces/*>"}} {
		k := replay.Key(p[0], p[1])
		if k != replay.Key(p[0], p[1]) {
			t.Fatalf("Key(%q, %q) is not stable", p[0], p[1])
		}
		if len(k) != hex.EncodedLen(sha256.Size) || !natsKey.MatchString(k) || k != lower(k) {
			t.Errorf("Key(%q, %q) = %q is not 64 lowercase hex digits", p[0], p[1], k)
		}
	}
}

// TestKeyIsTheDocumentedEncoding pins the encoding: replicas of different
// builds share one bucket, so a change would let a spent grant be spent
// again under its new key.
func TestKeyIsTheDocumentedEncoding(t *testing.T) {
	input := append([]byte{0, 0, 0, 0, 0, 0, 0, 2}, "ab"...)
	input = append(input, 0, 0, 0, 0, 0, 0, 0, 1)
	input = append(input, 'c')
	sum := sha256.Sum256(input)
	if got, want := replay.Key("ab", "c"), hex.EncodeToString(sum[:]); got != want {
		t.Errorf("Key(ab, c) = %s, want %s", got, want)
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
