package garmtool_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// info asks one instance of the micro service name for its $SRV.INFO.
func info(t *testing.T, nc *nats.Conn, name string) micro.Info {
	t.Helper()
	subject, err := micro.ControlSubject(micro.InfoVerb, name, "")
	if err != nil {
		t.Fatal(err)
	}
	reply, err := nc.RequestWithContext(testContext(t), subject, nil)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	var got micro.Info
	if err := json.Unmarshal(reply.Data, &got); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestSrvInfoCarriesTheIdentityAndTheBareVersion(t *testing.T) {
	svc := garmtool.New("echoer", "v1.2.3")
	if err := svc.Endpoint(echo, newString, echoing); err != nil {
		t.Fatal(err)
	}
	h := garmtooltest.Start(t, svc)
	got := info(t, h.Conn(), wire.ServiceName(echo.Service))
	if got.Name != "test_v1_Echo" || got.Version != "1.2.3" || got.Description != "echoer" {
		t.Errorf("name %q, version %q, description %q; want test_v1_Echo, 1.2.3, echoer", got.Name, got.Version, got.Description)
	}
	want := map[string]string{wire.IdentityMetadata: echo.DescriptorHash, wire.ContractVersionMetadata: echo.ContractVersion}
	if len(got.Metadata) != len(want) {
		t.Errorf("metadata %v, want %v", got.Metadata, want)
	}
	for k, v := range want {
		if got.Metadata[k] != v {
			t.Errorf("metadata %s = %q, want %q", k, got.Metadata[k], v)
		}
	}
}

func TestEndpointSubjectsAndQueueGroupsAreExactlyWires(t *testing.T) {
	// Two proto services of one package in one process: each is its own
	// micro service carrying its own tools.
	echoShout := toolRef("test.v1.Echo", "Shout")
	other := toolRef("test.v1.Other", "Whisper")
	svc := garmtool.New("test", "1.0.0")
	for _, ref := range []struct{ service, method string }{{echo.Service, "Echo"}, {echoShout.Service, "Shout"}, {other.Service, "Whisper"}} {
		if err := svc.Endpoint(toolRef(ref.service, ref.method), newString, echoing); err != nil {
			t.Fatal(err)
		}
	}
	h := garmtooltest.Start(t, svc)
	for service, methods := range map[string][]string{"test.v1.Echo": {"/test.v1.Echo/Echo", "/test.v1.Echo/Shout"}, "test.v1.Other": {"/test.v1.Other/Whisper"}} {
		got := info(t, h.Conn(), wire.ServiceName(service))
		var want []micro.EndpointInfo
		for _, method := range methods {
			want = append(want, micro.EndpointInfo{
				Name:       wire.EndpointName(wire.Subject(method)),
				Subject:    wire.Subject(method),
				QueueGroup: wire.QueueGroup(service),
			})
		}
		if !slices.EqualFunc(got.Endpoints, want, func(a, b micro.EndpointInfo) bool {
			return a.Name == b.Name && a.Subject == b.Subject && a.QueueGroup == b.QueueGroup
		}) {
			t.Errorf("%s serves %+v, want %+v", service, got.Endpoints, want)
		}
	}
}

func TestWiresErrorHeadersAreMicros(t *testing.T) {
	if wire.ErrorCodeHeader != micro.ErrorCodeHeader || wire.ErrorHeader != micro.ErrorHeader {
		t.Fatalf("wire's error headers %q, %q differ from micro's %q, %q",
			wire.ErrorCodeHeader, wire.ErrorHeader, micro.ErrorCodeHeader, micro.ErrorHeader)
	}
}
