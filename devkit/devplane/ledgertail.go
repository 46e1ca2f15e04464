package devplane

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
)

// ledgerTail follows GARM_LEDGER: it keeps each row of this run by event
// id, for the dev endpoint, and, when it has a writer, prints one line per
// row: columns that say what happened and to whom, never a value of a call.
type ledgerTail struct {
	consume jetstream.ConsumeContext
	rows    *rowIndex
	mu      sync.Mutex // one line at a time
	w       io.Writer  // nil: nothing printed
}

// startLedgerTail follows GARM_LEDGER from now on with an ordered consumer,
// so a reused --data directory does not replay earlier runs.
func startLedgerTail(ctx context.Context, nc *nats.Conn, w io.Writer, rows *rowIndex) (*ledgerTail, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	consumer, err := js.OrderedConsumer(ctx, wire.LedgerStream, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverNewPolicy,
	})
	if err != nil {
		return nil, fmt.Errorf("following %s: %w", wire.LedgerStream, err)
	}
	t := &ledgerTail{w: w, rows: rows}
	if t.consume, err = consumer.Consume(t.take); err != nil {
		return nil, fmt.Errorf("following %s: %w", wire.LedgerStream, err)
	}
	return t, nil
}

func (t *ledgerTail) take(msg jetstream.Msg) {
	var batch ledgerv1.Batch
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := proto.Unmarshal(msg.Data(), &batch); err != nil {
		if t.w != nil {
			fmt.Fprintf(t.w, "ledger: a message on %s is not a Batch: %v\n", msg.Subject(), err)
		}
		return
	}
	for _, e := range batch.GetEvents() {
		t.rows.add(e)
		if t.w != nil {
			fmt.Fprintln(t.w, LedgerLine(e))
		}
	}
}

// LedgerLine is one row in compact columns: time, outcome, tool, the
// principal (and the agent acting for it), how many fields were withheld
// and disclosed, the latency, and for a denied or failed call its code
// (error_kind) and the detail garmd recorded (error_detail). The detail
// never reaches a caller on the wire; the dev plane is on loopback, for the
// author of the tools, and showing it is the point of the column. Every
// text column is a LedgerField: what a caller named (a tool that does not
// exist, a subject) cannot forge a column or a line of its own.
func LedgerLine(e *ledgerv1.Event) string {
	principal := LedgerField(e.GetPrincipalSubject())
	if actor := e.GetPrincipalActor(); actor != "" {
		principal += " via " + LedgerField(actor)
	}
	columns := []string{
		"ledger",
		e.GetTime().AsTime().Local().Format(time.TimeOnly + ".000"),
		fmt.Sprintf("%-6s", LedgerField(e.GetOutcome())),
		LedgerField(e.GetTool()),
		principal,
		fmt.Sprintf("redacted=%d", e.GetRedactionCount()),
		fmt.Sprintf("disclosed=%d", e.GetDisclosedCount()),
		fmt.Sprintf("%.1fms", e.GetLatencyMs()),
	}
	if kind := e.GetErrorKind(); kind != "" {
		columns = append(columns, "code="+LedgerField(kind))
	}
	if detail := e.GetErrorDetail(); detail != "" {
		columns = append(columns, "detail="+strconv.Quote(detail))
	}
	return strings.Join(columns, " ")
}

// LedgerField is a ledger text as one column: "-" when empty, as it is
// when it holds only letters, digits and . _ - : / @ + (every name garm
// gives), else quoted with its control, invisible and non-ASCII characters
// escaped.
func LedgerField(s string) string {
	if s == "" {
		return "-"
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-:/@+", r)) {
			return strconv.QuoteToASCII(s)
		}
	}
	return s
}

// stop stops following the stream.
func (t *ledgerTail) stop() { t.consume.Stop() }
