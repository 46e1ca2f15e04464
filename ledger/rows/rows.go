package rows

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/ledger/merkle"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// eventsField is the field number of Batch.events.
const eventsField protowire.Number = 1

var canonical = proto.MarshalOptions{Deterministic: true}

// Canonical is e's deterministic protobuf encoding: the leaf's bytes.
func Canonical(e *ledgerv1.Event) ([]byte, error) { return canonical.Marshal(e) }

// Row is one ledger row as the log sees it.
type Row struct {
	// Seq is the stream sequence of the Batch message holding the row
	// (0 when read from a file), and Index its place in that message.
	Seq   uint64
	Index uint32
	// N is the row's place in the ledger, from 0: its leaf index.
	N       uint64
	EventID string
	Leaf    merkle.Hash
	// Event is the decoded row, valid only during the call it is given
	// to: the decoder reuses it.
	Event *ledgerv1.Event
}

// String names the row for a person: its place, event id and stream
// position.
func (r Row) String() string {
	s := fmt.Sprintf("row %d (event %q", r.N, r.EventID)
	if r.Seq != 0 {
		s += fmt.Sprintf(", stream message %d row %d", r.Seq, r.Index)
	}
	return s + ")"
}

// Decoder hands out rows in order, numbering them.
type Decoder struct {
	next uint64
	e    ledgerv1.Event
	buf  []byte
}

// Batch decodes the Batch message data, stored at stream sequence seq,
// and calls fn with each row in order; fn's error stops it.
func (d *Decoder) Batch(seq uint64, data []byte, fn func(Row) error) error {
	var index uint32
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return fmt.Errorf("stream message %d: %w", seq, protowire.ParseError(n))
		}
		data = data[n:]
		if num != eventsField || typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, data)
			if n < 0 {
				return fmt.Errorf("stream message %d: %w", seq, protowire.ParseError(n))
			}
			data = data[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(data)
		if n < 0 {
			return fmt.Errorf("stream message %d: %w", seq, protowire.ParseError(n))
		}
		data = data[n:]
		if err := d.row(seq, index, v, fn); err != nil {
			return err
		}
		index++
	}
	return nil
}

func (d *Decoder) row(seq uint64, index uint32, v []byte, fn func(Row) error) error {
	d.e.Reset()
	if err := proto.Unmarshal(v, &d.e); err != nil {
		return fmt.Errorf("row %d (stream message %d row %d) does not decode: %w", d.next, seq, index, err)
	}
	var err error
	if d.buf, err = canonical.MarshalAppend(d.buf[:0], &d.e); err != nil {
		return fmt.Errorf("row %d (stream message %d row %d) does not encode: %w", d.next, seq, index, err)
	}
	r := Row{Seq: seq, Index: index, N: d.next, EventID: d.e.GetEventId(), Leaf: merkle.LeafHash(d.buf), Event: &d.e}
	d.next++
	return fn(r)
}

// ScanFile reads a file of rows (Batch messages concatenated) and calls fn
// with each row in order.
func ScanFile(r io.Reader, fn func(Row) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var d Decoder
	var buf []byte
	for {
		tag, err := readVarint(br)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("the file of rows: %w", err)
		}
		num, typ := protowire.DecodeTag(tag)
		if num != eventsField || typ != protowire.BytesType {
			return fmt.Errorf("the file of rows holds field %d of type %d, not garm.ledger.v1.Batch rows", num, typ)
		}
		size, err := readVarint(br)
		if err != nil {
			return fmt.Errorf("the file of rows ends inside row %d: %w", d.next, err)
		}
		if size > 64<<20 {
			return fmt.Errorf("row %d of the file claims %d bytes", d.next, size)
		}
		buf = append(buf[:0], make([]byte, size)...)
		if _, err := io.ReadFull(br, buf); err != nil {
			return fmt.Errorf("the file of rows ends inside row %d: %w", d.next, err)
		}
		if err := d.row(0, 0, buf, fn); err != nil {
			return err
		}
	}
}

func readVarint(br *bufio.Reader) (uint64, error) {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		b, err := br.ReadByte()
		if err != nil {
			if shift > 0 && errors.Is(err, io.EOF) {
				return 0, io.ErrUnexpectedEOF
			}
			return 0, err
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("a varint overflows")
}

// idleEnd is how long ScanStream waits for a message past the last one the
// stream held when it started before it decides the stream has no more.
const idleEnd = 2 * time.Second

// ScanStream reads GARM_LEDGER from its first message to the last one it
// holds when ScanStream starts, and calls fn with each row in order.
func ScanStream(ctx context.Context, js jetstream.JetStream, fn func(Row) error) error {
	s, err := js.Stream(ctx, wire.LedgerStream)
	if err != nil {
		return fmt.Errorf("reading %s: %w", wire.LedgerStream, err)
	}
	last := s.CachedInfo().State.LastSeq
	if last == 0 {
		return nil
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return fmt.Errorf("reading %s: %w", wire.LedgerStream, err)
	}
	var d Decoder
	for {
		batch, err := cons.Fetch(256, jetstream.FetchMaxWait(idleEnd))
		if err != nil {
			return fmt.Errorf("reading %s: %w", wire.LedgerStream, err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			meta, err := m.Metadata()
			if err != nil {
				return err
			}
			if meta.Sequence.Stream > last {
				return nil
			}
			if err := d.Batch(meta.Sequence.Stream, m.Data(), fn); err != nil {
				return err
			}
			if meta.Sequence.Stream == last {
				return nil
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return fmt.Errorf("reading %s: %w", wire.LedgerStream, err)
		}
		if got == 0 {
			return fmt.Errorf("reading %s: it ended before message %d, which it held when the read started", wire.LedgerStream, last)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
