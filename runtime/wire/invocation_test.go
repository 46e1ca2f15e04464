package wire_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func fullInvocation() *toolv1.InvocationContext {
	return &toolv1.InvocationContext{
		Attribution: &toolv1.CallContext{
			Tenant: "acme", App: "support-bot", RunId: "run-1", CorrelationId: "corr-1",
			CausationId: "cause-1", BudgetId: "budget-1", Tags: map[string]string{"task_id": "t-9"}, Feature: "refunds",
		},
		Principal:       &toolv1.InvocationPrincipal{Subject: "user:ada", Kind: toolv1.PrincipalKind_PRINCIPAL_KIND_USER},
		Act:             []*toolv1.Act{{Subject: "agent:helper", Kind: toolv1.PrincipalKind_PRINCIPAL_KIND_AGENT}},
		Scopes:          []string{"tools"},
		Traceparent:     "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		Tracestate:      "vendor=1",
		Deadline:        timestamppb.New(time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)),
		CallId:          "01J00000000000000000000000",
		IdempotencyKey:  "idem-1",
		ContractVersion: "1.2.0",
		GrantJti:        "jti-1",
		Agent:           "agent:helper",
	}
}

func encode(t *testing.T, inv *toolv1.InvocationContext) string {
	t.Helper()
	value, err := wire.EncodeInvocation(inv)
	if err != nil {
		t.Fatalf("EncodeInvocation: %v", err)
	}
	return value
}

func TestAnInvocationSurvivesTheRoundTripWhole(t *testing.T) {
	inv := fullInvocation()
	value := encode(t, inv)
	raw, err := proto.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	if want := base64.StdEncoding.EncodeToString(raw); value != want {
		t.Fatalf("encoded %q, want standard padded base64 of the message %q", value, want)
	}
	got, err := wire.DecodeInvocation(value)
	if err != nil {
		t.Fatalf("DecodeInvocation: %v", err)
	}
	if !proto.Equal(got, inv) {
		t.Fatalf("decoded %v, want %v", got, inv)
	}
}

func TestDecodeInvocationRefusesWhatGarmdWouldNotSend(t *testing.T) {
	valid := encode(t, fullInvocation())
	// {call_id: "cc"} is four bytes, so its encoding ends in padding.
	short := encode(t, &toolv1.InvocationContext{CallId: "cc"})
	noCallID, _ := proto.Marshal(&toolv1.InvocationContext{Attribution: &toolv1.CallContext{Tenant: "acme"}})
	badUTF8 := protowire.AppendString(protowire.AppendTag(nil, 8, protowire.BytesType), "c\xff")
	badDeadline := protowire.AppendTag(nil, 8, protowire.BytesType)
	badDeadline = protowire.AppendString(badDeadline, "c")
	minusOne := int64(-1)
	nanos := protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), uint64(minusOne))
	badDeadline = protowire.AppendBytes(protowire.AppendTag(badDeadline, 7, protowire.BytesType), nanos)
	truncated, _ := proto.Marshal(fullInvocation())
	truncated = truncated[:len(truncated)-3]

	tests := []struct {
		name  string
		value string
		want  error
	}{
		{"empty", "", wire.ErrNoInvocation},
		{"not base64", "not base64!", wire.ErrMalformedInvocation},
		{"unpadded", strings.TrimRight(short, "="), wire.ErrMalformedInvocation},
		{"URL alphabet", strings.NewReplacer("+", "-", "/", "_").Replace(valid) + "-_", wire.ErrMalformedInvocation},
		{"line break inside", valid[:8] + "\r\n" + valid[8:], wire.ErrMalformedInvocation},
		{"trailing garbage after padding", short + "QQ==", wire.ErrMalformedInvocation},
		{"stray padding bits", strings.Replace(short, "Yw==", "Yx==", 1), wire.ErrMalformedInvocation},
		{"surrounding space", " " + valid, wire.ErrMalformedInvocation},
		{"not an InvocationContext", base64.StdEncoding.EncodeToString([]byte{0xff, 0xff, 0xff, 0xff}), wire.ErrMalformedInvocation},
		{"truncated message", base64.StdEncoding.EncodeToString(truncated), wire.ErrMalformedInvocation},
		{"invalid UTF-8 in a string", base64.StdEncoding.EncodeToString(badUTF8), wire.ErrMalformedInvocation},
		{"invalid deadline", base64.StdEncoding.EncodeToString(badDeadline), wire.ErrMalformedInvocation},
		{"too large", strings.Repeat("A", wire.MaxInvocationHeaderSize+4), wire.ErrMalformedInvocation},
		{"no call id", base64.StdEncoding.EncodeToString(noCallID), wire.ErrNoCallID},
		{"empty message", base64.StdEncoding.EncodeToString(nil), wire.ErrNoInvocation},
	}
	for _, tt := range tests {
		inv, err := wire.DecodeInvocation(tt.value)
		if inv != nil || !errors.Is(err, tt.want) {
			t.Errorf("%s: DecodeInvocation = %v, %v; want nil, %v", tt.name, inv, err, tt.want)
		}
	}
}

// "" is what base64 of an empty message looks like, so it is reported as no
// invocation rather than a message without a call id; both refuse.
func TestAnEmptyMessageEncodesAsNoInvocation(t *testing.T) {
	if base64.StdEncoding.EncodeToString(nil) != "" {
		t.Fatal("base64 of nothing is not empty")
	}
}

func TestDecodeInvocationKeepsFieldsThisBuildDoesNotKnow(t *testing.T) {
	raw, _ := proto.Marshal(&toolv1.InvocationContext{CallId: "c"})
	raw = protowire.AppendVarint(protowire.AppendTag(raw, 99, protowire.VarintType), 7)
	inv, err := wire.DecodeInvocation(base64.StdEncoding.EncodeToString(raw))
	if err != nil {
		t.Fatalf("an invocation from a newer garmd was refused: %v", err)
	}
	if inv.GetCallId() != "c" || len(inv.ProtoReflect().GetUnknown()) == 0 {
		t.Fatalf("decoded %v with unknown %x", inv, inv.ProtoReflect().GetUnknown())
	}
}

func TestEncodeInvocationRefusesWhatDecodeWouldRefuse(t *testing.T) {
	tests := []struct {
		name string
		inv  *toolv1.InvocationContext
		want error
	}{
		{"nil", nil, wire.ErrNoCallID},
		{"no call id", &toolv1.InvocationContext{Agent: "a"}, wire.ErrNoCallID},
		{"invalid UTF-8", &toolv1.InvocationContext{CallId: "c", Agent: "\xff"}, wire.ErrMalformedInvocation},
		{"invalid deadline", &toolv1.InvocationContext{CallId: "c", Deadline: &timestamppb.Timestamp{Nanos: -1}}, wire.ErrMalformedInvocation},
		{"too large", &toolv1.InvocationContext{CallId: "c", Tracestate: strings.Repeat("x", wire.MaxInvocationHeaderSize)}, wire.ErrMalformedInvocation},
	}
	for _, tt := range tests {
		value, err := wire.EncodeInvocation(tt.inv)
		if value != "" || !errors.Is(err, tt.want) {
			t.Errorf("%s: EncodeInvocation = %q, %v; want \"\", %v", tt.name, value, err, tt.want)
		}
	}
}

func TestTheInvocationTravelsOnTheContext(t *testing.T) {
	if inv := wire.InvocationFrom(context.Background()); inv != nil {
		t.Fatalf("a context outside a served request carries %v", inv)
	}
	inv := fullInvocation()
	ctx := wire.WithInvocation(context.Background(), inv)
	if got := wire.InvocationFrom(ctx); got != inv {
		t.Fatalf("InvocationFrom = %v, want %v", got, inv)
	}
	child, cancel := context.WithCancel(ctx)
	defer cancel()
	if got := wire.InvocationFrom(child); got != inv {
		t.Fatal("a derived context lost the invocation")
	}
}

// AppendInvocation appends exactly EncodeInvocation's value, whatever dst
// holds and whatever room it has; a refusal leaves dst as it was.
func TestAppendInvocationAppendsTheEncodedValue(t *testing.T) {
	inv := fullInvocation()
	want := encode(t, inv)
	for _, dst := range [][]byte{nil, []byte("prefix:"), make([]byte, 3, 4096)} {
		before := string(dst)
		got, err := wire.AppendInvocation(dst, inv)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != before+want {
			t.Errorf("appended to %q: %q, want %q", before, got, before+want)
		}
	}
	huge := fullInvocation()
	huge.Tracestate = strings.Repeat("x", wire.MaxInvocationHeaderSize)
	dst := []byte("kept")
	got, err := wire.AppendInvocation(dst, huge)
	if !errors.Is(err, wire.ErrMalformedInvocation) || string(got) != "kept" {
		t.Errorf("an oversized invocation: %q, %v; want dst unchanged and ErrMalformedInvocation", got, err)
	}
}
