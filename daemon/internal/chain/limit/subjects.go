package limit

import (
	"crypto/sha256"
	"encoding/base32"
	"time"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
)

// subjectRoot begins every counter subject. Under it, one class per
// window ("s", "m", "h", "d") and "c" for concurrency, each in a stream of
// its own whose max_age outlives one window (Streams).
const subjectRoot = "garm.limits."

const concurrencyClass = "c"

// Lease is the span of a concurrency epoch: a call in flight is counted in
// the epoch it was admitted in, and an admission reads that epoch and the
// one before. A count a replica that died could not give back stops being
// read within two leases (docs/decisions/0127). A call's deadline must not
// exceed it.
const Lease = 2 * time.Minute

type window struct {
	span  time.Duration
	class string
}

var windows = map[toolv1.Limit_Window]window{
	toolv1.Limit_WINDOW_SECOND: {time.Second, "s"},
	toolv1.Limit_WINDOW_MINUTE: {time.Minute, "m"},
	toolv1.Limit_WINDOW_HOUR:   {time.Hour, "h"},
	toolv1.Limit_WINDOW_DAY:    {24 * time.Hour, "d"},
}

// Stream is one counter stream garmd needs: its name, subject filter and
// max_age. Every one allows message counters, keeps one message per
// subject and discards old.
type Stream struct {
	Name, Subjects string
	MaxAge         time.Duration
}

// Streams are the counter streams, one per window and one for concurrency.
// A counter lives for twice its window after its last increment, so none
// expires inside its window, and each expires on its own after.
func Streams() []Stream {
	return []Stream{
		{wire.LimitSecondStream, subjectRoot + "s.>", 2 * time.Second},
		{wire.LimitMinuteStream, subjectRoot + "m.>", 2 * time.Minute},
		{wire.LimitHourStream, subjectRoot + "h.>", 2 * time.Hour},
		{wire.LimitDayStream, subjectRoot + "d.>", 48 * time.Hour},
		{wire.LimitConcurrencyStream, subjectRoot + concurrencyClass + ".>", 2*Lease + time.Minute},
	}
}

// ClockSubject is the counter that garmd adds 0 to and reads back, to learn
// the bus's clock (docs/decisions/0126). It lives in the per-second stream.
const ClockSubject = subjectRoot + "s.clock"

// keyEncoding spells a key digest as one subject token of [A-Z2-7].
var keyEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// keyToken digests the key's values, each length-prefixed so no two keys
// share a spelling: a caller's value never reaches a subject.
func keyToken(buf []byte, values ...string) string {
	h := sha256.New()
	for _, v := range values {
		n := len(v)
		h.Write([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
		h.Write([]byte(v))
	}
	sum := h.Sum(buf[:0])
	return keyEncoding.EncodeToString(sum[:20])
}
