package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	customv1 "github.com/garm-dev/garm/protoc-gen-garm/testdata/custom_name/want"
	excludev1 "github.com/garm-dev/garm/protoc-gen-garm/testdata/exclude/want"
	initialismsv1 "github.com/garm-dev/garm/protoc-gen-garm/testdata/initialisms/want"
	minimalv1 "github.com/garm-dev/garm/protoc-gen-garm/testdata/minimal/want"
	severalv1 "github.com/garm-dev/garm/protoc-gen-garm/testdata/several_services/want"
	"github.com/garm-dev/garm/runtime/toolbind"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

// The golden bindings are compiled into this test and exercised through a
// recording Registrar, so a golden that is wrong but self-consistent fails.

type endpoint struct {
	ref        toolbind.ToolRef
	newRequest func() proto.Message
	handler    toolbind.Handler
}

type recordingRegistrar struct {
	endpoints []endpoint
	failAt    int // fail the n-th registration (1-based); 0 never
}

func (r *recordingRegistrar) Endpoint(ref toolbind.ToolRef, newRequest func() proto.Message, h toolbind.Handler) error {
	if r.failAt == len(r.endpoints)+1 {
		return fmt.Errorf("registrar refused %s", ref.Subject)
	}
	r.endpoints = append(r.endpoints, endpoint{ref, newRequest, h})
	return nil
}

func TestToolRefsNameEveryToolOfTheService(t *testing.T) {
	ref := func(fqn, svc, method, version, hash string) toolbind.ToolRef {
		return toolbind.ToolRef{
			FQN: fqn, Subject: svc + "." + method, Method: "/" + svc + "/" + method, Service: svc,
			ContractVersion: version, DescriptorHash: hash,
		}
	}
	tests := []struct {
		name string
		got  []toolbind.ToolRef
		want []toolbind.ToolRef
	}{
		{"minimal", minimalv1.EchoServiceTools, []toolbind.ToolRef{
			ref("minimal.v1.echo", "minimal.v1.EchoService", "Echo", "dev", minimalv1.DescriptorHash),
		}},
		{"custom name and contract version", customv1.WeatherServiceTools, []toolbind.ToolRef{
			ref("custom.v1.weather_now", "custom.v1.WeatherService", "GetCurrentConditions", "2026.11.1", customv1.DescriptorHash),
		}},
		{"initialisms", initialismsv1.WebServiceTools, []toolbind.ToolRef{
			ref("initialisms.v1.get_http_status", "initialisms.v1.WebService", "GetHTTPStatus", "dev", initialismsv1.DescriptorHash),
			ref("initialisms.v1.list_v2_items", "initialisms.v1.WebService", "ListV2Items", "dev", initialismsv1.DescriptorHash),
			ref("initialisms.v1.resolve_dns_name", "initialisms.v1.WebService", "ResolveDNSName", "dev", initialismsv1.DescriptorHash),
		}},
		{"exclude keeps the excluded method out", excludev1.DocumentsServiceTools, []toolbind.ToolRef{
			ref("exclude.v1.get_document", "exclude.v1.DocumentsService", "GetDocument", "dev", excludev1.DescriptorHash),
		}},
		{"several services: accounts", severalv1.AccountsServiceTools, []toolbind.ToolRef{
			ref("several.v1.get_balance", "several.v1.AccountsService", "GetBalance", "dev", severalv1.DescriptorHash),
			ref("several.v1.ping", "several.v1.AccountsService", "Ping", "dev", severalv1.DescriptorHash),
		}},
		{"several services: transfers", severalv1.TransfersServiceTools, []toolbind.ToolRef{
			ref("several.v1.transfer", "several.v1.TransfersService", "Transfer", "dev", severalv1.DescriptorHash),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if fmt.Sprint(tt.got) != fmt.Sprint(tt.want) {
				t.Errorf("tools =\n  %+v\nwant\n  %+v", tt.got, tt.want)
			}
			for _, r := range tt.got {
				if len(r.DescriptorHash) != 64 || strings.Trim(r.DescriptorHash, "0123456789abcdef") != "" {
					t.Errorf("%s: descriptor hash %q is not 64 lowercase hex characters", r.FQN, r.DescriptorHash)
				}
			}
		})
	}
	if customv1.ContractVersion != "2026.11.1" || minimalv1.ContractVersion != "dev" {
		t.Errorf("ContractVersion = %q and %q, want the parameter's value and dev", customv1.ContractVersion, minimalv1.ContractVersion)
	}
}

type echo struct {
	res *minimalv1.EchoResponse
	err error
	got *minimalv1.EchoRequest
}

func (e *echo) Echo(_ context.Context, req *minimalv1.EchoRequest) (*minimalv1.EchoResponse, error) {
	e.got = req
	return e.res, e.err
}

func serveEcho(t *testing.T, h minimalv1.EchoServiceHandler) endpoint {
	t.Helper()
	var r recordingRegistrar
	if err := minimalv1.ServeEchoService(&r, h); err != nil {
		t.Fatal(err)
	}
	if len(r.endpoints) != 1 {
		t.Fatalf("registered %d endpoints, want 1", len(r.endpoints))
	}
	return r.endpoints[0]
}

func TestServeRegistersOneEndpointPerToolWithItsRequestType(t *testing.T) {
	var r recordingRegistrar
	if err := severalv1.ServeAccountsService(&r, accounts{}); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		subject string
		request proto.Message
	}{
		{"several.v1.AccountsService.GetBalance", &severalv1.GetBalanceRequest{}},
		{"several.v1.AccountsService.Ping", &emptypb.Empty{}},
	}
	if len(r.endpoints) != len(want) {
		t.Fatalf("registered %d endpoints, want %d", len(r.endpoints), len(want))
	}
	for i, w := range want {
		e := r.endpoints[i]
		if e.ref != severalv1.AccountsServiceTools[i] || e.ref.Subject != w.subject {
			t.Errorf("endpoint %d ref = %+v, want %s", i, e.ref, w.subject)
		}
		req := e.newRequest()
		if req.ProtoReflect().Descriptor().FullName() != w.request.ProtoReflect().Descriptor().FullName() {
			t.Errorf("%s: newRequest gives %T, want %T", w.subject, req, w.request)
		}
		if e.newRequest() == req {
			t.Errorf("%s: newRequest returned the same message twice", w.subject)
		}
	}
}

type accounts struct{}

func (accounts) GetBalance(context.Context, *severalv1.GetBalanceRequest) (*severalv1.GetBalanceResponse, error) {
	return &severalv1.GetBalanceResponse{BalanceMinorUnits: proto.Int64(1250)}, nil
}
func (accounts) Ping(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, nil
}

func TestAGeneratedHandlerPassesTheRequestAndTheAnswerThrough(t *testing.T) {
	h := &echo{res: &minimalv1.EchoResponse{Text: proto.String("hello")}}
	e := serveEcho(t, h)
	req := &minimalv1.EchoRequest{Text: proto.String("hello")}
	res, err := e.handler(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if h.got != req || res != h.res {
		t.Errorf("handler saw %v and answered %v, want the same request and answer", h.got, res)
	}
}

func TestAGeneratedHandlerReturnsTheToolsErrorUnchanged(t *testing.T) {
	refusal := fmt.Errorf("looking up: %w", &toolbind.CodedError{Code: "404", Message: "no such text"})
	e := serveEcho(t, &echo{res: &minimalv1.EchoResponse{}, err: refusal})
	res, err := e.handler(context.Background(), &minimalv1.EchoRequest{})
	if err != refusal || res != nil {
		t.Fatalf("handler = (%v, %v), want (nil, the tool's own error)", res, err)
	}
	var coded *toolbind.CodedError
	if !errors.As(err, &coded) || coded.Code != "404" {
		t.Errorf("the coded refusal was lost: %v", err)
	}
}

func TestAGeneratedHandlerRefusesANilResponseNamingTheSubject(t *testing.T) {
	e := serveEcho(t, &echo{})
	res, err := e.handler(context.Background(), &minimalv1.EchoRequest{})
	if res != nil || err == nil {
		t.Fatalf("handler = (%v, %v), want an error", res, err)
	}
	if want := "minimal.v1.EchoService.Echo: handler returned no response and no error"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestAGeneratedHandlerRefusesARequestOfAnotherType(t *testing.T) {
	h := &echo{res: &minimalv1.EchoResponse{}}
	e := serveEcho(t, h)
	res, err := e.handler(context.Background(), &emptypb.Empty{})
	if res != nil || err == nil || !strings.Contains(err.Error(), "minimal.v1.EchoService.Echo") {
		t.Fatalf("handler = (%v, %v), want an error naming the subject", res, err)
	}
	if h.got != nil {
		t.Error("the tool's method ran on a request of another type")
	}
}

func TestServeRefusesANilHandlerOrRegistrar(t *testing.T) {
	if err := minimalv1.ServeEchoService(&recordingRegistrar{}, nil); err == nil {
		t.Error("a nil handler was accepted")
	}
	if err := minimalv1.ServeEchoService(nil, &echo{}); err == nil {
		t.Error("a nil registrar was accepted")
	}
}

func TestServeStopsAtTheFirstRegistrationError(t *testing.T) {
	r := &recordingRegistrar{failAt: 1}
	err := severalv1.ServeAccountsService(r, accounts{})
	if err == nil || !strings.Contains(err.Error(), "several.v1.AccountsService.GetBalance") {
		t.Fatalf("Serve = %v, want the registrar's error", err)
	}
	if len(r.endpoints) != 0 {
		t.Errorf("registered %d endpoints after the failure", len(r.endpoints))
	}
}

func TestToolsIsACopyServeDoesNotDependOn(t *testing.T) {
	saved := minimalv1.EchoServiceTools[0]
	minimalv1.EchoServiceTools[0].Subject = "evil.>"
	defer func() { minimalv1.EchoServiceTools[0] = saved }()
	if e := serveEcho(t, &echo{}); e.ref.Subject != "minimal.v1.EchoService.Echo" {
		t.Errorf("Serve registered subject %q after EchoServiceTools was modified", e.ref.Subject)
	}
}
