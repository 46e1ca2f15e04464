package garmtool_test

import (
	"context"
	"strings"
	"testing"

	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/toolbind"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
)

// wantRefused fails unless err is a refusal mentioning every one of names.
func wantRefused(t *testing.T, err error, names ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want a refusal naming %q", names)
	}
	for _, name := range names {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("refusal %q does not name %q", err, name)
		}
	}
}

func TestADuplicateSubjectIsRefusedNamingIt(t *testing.T) {
	svc := garmtool.New("test", "1.0.0")
	if err := svc.Endpoint(echo, newString, echoing); err != nil {
		t.Fatal(err)
	}
	again := echo
	again.FQN = "test.v1.echo_again"
	wantRefused(t, svc.Endpoint(again, newString, echoing), `"test.v1.Echo.Echo"`, "test.v1.echo", "test.v1.echo_again")
}

func TestToolsOfTwoDescriptorHashesAreRefusedNamingBothAndTheTool(t *testing.T) {
	svc := garmtool.New("test", "1.0.0")
	if err := svc.Endpoint(echo, newString, echoing); err != nil {
		t.Fatal(err)
	}
	other := toolRef("other.v1.Other", "Shout")
	other.DescriptorHash = hashB
	wantRefused(t, svc.Endpoint(other, newString, echoing), hashA, hashB, "other.v1.shout")
}

func TestToolsOfTwoContractVersionsAreRefusedNamingBothAndTheTool(t *testing.T) {
	svc := garmtool.New("test", "1.0.0")
	if err := svc.Endpoint(echo, newString, echoing); err != nil {
		t.Fatal(err)
	}
	other := toolRef("test.v1.Echo", "Shout")
	other.ContractVersion = "2.0.0"
	wantRefused(t, svc.Endpoint(other, newString, echoing), `"1.0.0"`, `"2.0.0"`, "test.v1.shout")
}

func TestAToolRefThatCannotBeServedIsRefusedNamingWhy(t *testing.T) {
	mutate := func(f func(*toolbind.ToolRef)) toolbind.ToolRef {
		ref := echo
		f(&ref)
		return ref
	}
	tests := []struct {
		name       string
		ref        toolbind.ToolRef
		newRequest func() proto.Message
		handler    toolbind.Handler
		names      []string
	}{
		{"no FQN", mutate(func(r *toolbind.ToolRef) { r.FQN = "" }), newString, echoing, []string{"without an FQN"}},
		{"no handler", echo, newString, nil, []string{"test.v1.echo", "handler"}},
		{"no request constructor", echo, nil, echoing, []string{"test.v1.echo", "request constructor"}},
		{"a constructor that makes nothing", echo, func() proto.Message { return nil }, echoing, []string{"returned no message"}},
		{"a malformed method", mutate(func(r *toolbind.ToolRef) { r.Method = "test.v1.Echo/Echo" }), newString, echoing, []string{`"test.v1.Echo/Echo"`}},
		{"a method with a wildcard", mutate(func(r *toolbind.ToolRef) { r.Method = "/test.v1.Echo/*" }), newString, echoing, []string{`"/test.v1.Echo/*"`}},
		{"a method of another service", mutate(func(r *toolbind.ToolRef) { r.Service = "test.v1.Other" }), newString, echoing, []string{`"test.v1.Other"`}},
		{"a subject that is not the method's", mutate(func(r *toolbind.ToolRef) { r.Subject = "elsewhere" }), newString, echoing, []string{`"elsewhere"`, `"test.v1.Echo.Echo"`}},
		{"a malformed descriptor hash", mutate(func(r *toolbind.ToolRef) { r.DescriptorHash = "ABC" }), newString, echoing, []string{`"ABC"`}},
		{"no contract version", mutate(func(r *toolbind.ToolRef) { r.ContractVersion = "" }), newString, echoing, []string{"contract version"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := garmtool.New("test", "1.0.0")
			wantRefused(t, svc.Endpoint(tt.ref, tt.newRequest, tt.handler), tt.names...)
		})
	}
}

func TestRunWithoutEndpointsIsRefused(t *testing.T) {
	server := garmtooltest.StartServer(t)
	nc := connect(t, server.URL())
	wantRefused(t, garmtool.New("test", "1.0.0").Run(testContext(t), nc), "no tools to serve")
}

func TestRunWithoutAConnectionIsRefused(t *testing.T) {
	svc := garmtool.New("test", "1.0.0")
	if err := svc.Endpoint(echo, newString, echoing); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, svc.Run(testContext(t), nil), "connection")
}

func TestAVersionThatIsNotSemanticVersioningIsRefused(t *testing.T) {
	server := garmtooltest.StartServer(t)
	nc := connect(t, server.URL())
	for _, version := range []string{"", "v", "1.0", "vv1.0.0", "latest", "1.0.0 beta"} {
		svc := garmtool.New("test", version)
		if err := svc.Endpoint(echo, newString, echoing); err != nil {
			t.Fatal(err)
		}
		wantRefused(t, svc.Run(testContext(t), nc), "semantic version")
	}
}

func TestASecondRunIsRefused(t *testing.T) {
	svc := garmtool.New("test", "1.0.0")
	if err := svc.Endpoint(echo, newString, echoing); err != nil {
		t.Fatal(err)
	}
	h := garmtooltest.Start(t, svc)
	// While the first Run serves…
	wantRefused(t, svc.Run(testContext(t), h.ServiceConn()), "serves once")
	if _, err := callEcho(t, h, "still serving"); err != nil {
		t.Fatalf("the refused second Run disturbed the first: %v", err)
	}
	// …and after it returned.
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, svc.Run(testContext(t), h.ServiceConn()), "serves once")
}

func TestAServiceThatFailedToStartCannotBeRunAgain(t *testing.T) {
	svc := garmtool.New("test", "not semver")
	if err := svc.Endpoint(echo, newString, echoing); err != nil {
		t.Fatal(err)
	}
	if err := svc.Run(context.Background(), nil); err == nil {
		t.Fatal("Run without a connection was accepted")
	}
	wantRefused(t, svc.Run(context.Background(), nil), "serves once")
}

func TestRegistrationAfterRunIsRefused(t *testing.T) {
	svc := garmtool.New("test", "1.0.0")
	if err := svc.Endpoint(echo, newString, echoing); err != nil {
		t.Fatal(err)
	}
	garmtooltest.Start(t, svc)
	wantRefused(t, svc.Endpoint(toolRef("test.v1.Echo", "Late"), newString, echoing), "test.v1.late", "after Run")
}

func connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}
