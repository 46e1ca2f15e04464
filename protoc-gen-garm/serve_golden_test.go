package main

import (
	"context"
	"errors"
	"testing"
	"time"

	minimalv1 "github.com/garm-dev/garm/protoc-gen-garm/testdata/minimal/want"
	severalv1 "github.com/garm-dev/garm/protoc-gen-garm/testdata/several_services/want"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/toolbind"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

// The golden bindings also run for real: served by runtime/garmtool on an
// embedded NATS server and called the way garmd calls a tool.

type refusingAccounts struct{ accounts }

func (refusingAccounts) GetBalance(context.Context, *severalv1.GetBalanceRequest) (*severalv1.GetBalanceResponse, error) {
	return nil, toolbind.NotFound("no such account")
}

func TestGoldenBindingsServeOverNATS(t *testing.T) {
	svc := garmtool.New("golden", "1.0.0")
	if err := minimalv1.ServeEchoService(svc, &echo{res: &minimalv1.EchoResponse{Text: proto.String("hello back")}}); err != nil {
		t.Fatal(err)
	}
	h := garmtooltest.Start(t, svc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	var out minimalv1.EchoResponse
	if err := h.Call(ctx, minimalv1.EchoServiceTools[0], &minimalv1.EchoRequest{Text: proto.String("hello")}, &out); err != nil {
		t.Fatal(err)
	}
	if out.GetText() != "hello back" {
		t.Errorf("answer %q, want %q", out.GetText(), "hello back")
	}
}

func TestGoldenBindingsPassAToolsRefusalOverNATS(t *testing.T) {
	svc := garmtool.New("golden", "1.0.0")
	if err := severalv1.ServeAccountsService(svc, refusingAccounts{}); err != nil {
		t.Fatal(err)
	}
	h := garmtooltest.Start(t, svc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	err := h.Call(ctx, severalv1.AccountsServiceTools[0], &severalv1.GetBalanceRequest{AccountId: proto.String("a-1")}, new(severalv1.GetBalanceResponse))
	var refusal *toolbind.CodedError
	if !errors.As(err, &refusal) || refusal.Code != toolbind.CodeNotFound || refusal.Message != "no such account" {
		t.Fatalf("err = %v, want the tool's 404 refusal", err)
	}
	if err := h.Call(ctx, severalv1.AccountsServiceTools[1], &emptypb.Empty{}, new(emptypb.Empty)); err != nil {
		t.Errorf("the service's other tool: %v", err)
	}
}
