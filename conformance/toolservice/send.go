package toolservice

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	conformancev1 "github.com/garm-dev/garm/conformance/gen/garm/conformance/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// ContractService is the proto service every implementation under test
// serves.
const ContractService = "garm.conformance.v1.Conformance"

// DefaultDeadline is the invocation deadline of a case that names none.
const DefaultDeadline = 5 * time.Second

// answer is what came back for one request.
type answer struct {
	code, message string
	body          []byte
	noResponders  bool
	timedOut      bool
	elapsed       time.Duration
}

func method(tool string) (protoreflect.MethodDescriptor, error) {
	sd := conformancev1.File_garm_conformance_v1_conformance_proto.Services().ByName("Conformance")
	md := sd.Methods().ByName(protoreflect.Name(tool))
	if md == nil {
		return nil, fmt.Errorf("the contract has no tool %q", tool)
	}
	return md, nil
}

// subjectOf is the subject wire derives for a tool of the contract.
func subjectOf(tool string) string { return wire.Subject("/" + ContractService + "/" + tool) }

// buildRequest makes the NATS message a Send describes.
func buildRequest(s Send, callID string) (*nats.Msg, time.Duration, error) {
	md, err := method(s.Tool)
	if err != nil {
		return nil, 0, err
	}
	msg := nats.NewMsg(subjectOf(s.Tool))
	switch {
	case s.BodyHex != nil:
		msg.Data, err = hex.DecodeString(*s.BodyHex)
	case len(s.Body) > 0:
		in := dynamicpb.NewMessage(md.Input())
		if err = protojson.Unmarshal(s.Body, in); err == nil {
			msg.Data, err = proto.Marshal(in)
		}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("body: %w", err)
	}
	inv := &toolv1.InvocationContext{}
	if len(s.Invocation) > 0 {
		if err := protojson.Unmarshal(s.Invocation, inv); err != nil {
			return nil, 0, fmt.Errorf("invocation: %w", err)
		}
	}
	if inv.CallId == "" {
		inv.CallId = callID
	}
	wait := DefaultDeadline
	switch {
	case s.NoDeadline:
	case s.DeadlineMillis != nil:
		d := time.Duration(*s.DeadlineMillis) * time.Millisecond
		inv.Deadline = timestamppb.New(time.Now().Add(d))
		wait = max(d, 0)
	case inv.Deadline == nil:
		inv.Deadline = timestamppb.New(time.Now().Add(DefaultDeadline))
	}
	values, err := spell(s.Header, inv)
	if err != nil {
		return nil, 0, err
	}
	for _, v := range values {
		msg.Header.Add(wire.InvocationHeader, v)
	}
	return msg, wait + 2*time.Second, nil
}

// spell returns the Garm-Invocation values a header spelling sends.
func spell(how string, inv *toolv1.InvocationContext) ([]string, error) {
	enc := func() string {
		raw, _ := proto.Marshal(inv)
		return base64.StdEncoding.EncodeToString(raw)
	}
	// fit grows the call id until the encoding satisfies ok.
	fit := func(ok func(raw []byte, value string) bool) (string, error) {
		base := inv.CallId
		for i := range 64 {
			inv.CallId = base + strings.Repeat("~", i)
			raw, _ := proto.Marshal(inv)
			if v := base64.StdEncoding.EncodeToString(raw); ok(raw, v) {
				return v, nil
			}
		}
		return "", errors.New("no call id gives that spelling")
	}
	switch how {
	case "":
		return []string{enc()}, nil
	case "absent":
		return nil, nil
	case "empty":
		return []string{""}, nil
	case "twice":
		return []string{enc(), enc()}, nil
	case "unpadded":
		v, err := fit(func(_ []byte, v string) bool { return strings.HasSuffix(v, "=") })
		return []string{strings.TrimRight(v, "=")}, err
	case "urlsafe":
		v, err := fit(func(_ []byte, v string) bool { return strings.ContainsAny(v, "+/") })
		return []string{strings.NewReplacer("+", "-", "/", "_").Replace(v)}, err
	case "stray_bits":
		v, err := fit(func(_ []byte, v string) bool { return strings.HasSuffix(v, "==") })
		if err != nil {
			return nil, err
		}
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
		i := len(v) - 3
		return []string{v[:i] + string(alphabet[strings.IndexByte(alphabet, v[i])|1]) + v[i+1:]}, nil
	case "not_base64":
		return []string{"!!this is not base64!!"}, nil
	case "not_proto":
		return []string{base64.StdEncoding.EncodeToString([]byte{0xff, 0xff, 0xff})}, nil
	case "no_call_id":
		inv.CallId = ""
		return []string{enc()}, nil
	case "unknown_field":
		raw, _ := proto.Marshal(inv)
		raw = protowire.AppendTag(raw, 999, protowire.VarintType)
		raw = protowire.AppendVarint(raw, 1)
		return []string{base64.StdEncoding.EncodeToString(raw)}, nil
	case "bad_deadline":
		inv.Deadline = &timestamppb.Timestamp{Seconds: time.Now().Add(time.Hour).Unix(), Nanos: 2_000_000_000}
		return []string{enc()}, nil
	case "oversize":
		inv.CallId = strings.Repeat("x", wire.MaxInvocationHeaderSize)
		return []string{enc()}, nil
	}
	return nil, fmt.Errorf("unknown header spelling %q", how)
}

// request sends msg and waits for its answer for at most wait.
func request(ctx context.Context, nc *nats.Conn, msg *nats.Msg, wait time.Duration) answer {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	start := time.Now()
	reply, err := nc.RequestMsgWithContext(ctx, msg)
	a := answer{elapsed: time.Since(start)}
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		a.noResponders = true
	case err != nil:
		a.timedOut = true
	default:
		a.code = reply.Header.Get(wire.ErrorCodeHeader)
		a.message = reply.Header.Get(wire.ErrorHeader)
		a.body = reply.Data
	}
	return a
}

func (a answer) String() string {
	switch {
	case a.noResponders:
		return "no responders"
	case a.timedOut:
		return fmt.Sprintf("no answer within %v", a.elapsed.Round(time.Millisecond))
	case a.code != "":
		return fmt.Sprintf("error %s %q", a.code, a.message)
	}
	return fmt.Sprintf("a response of %d bytes", len(a.body))
}
