package garmtool

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/runtime/toolbind"
	"github.com/garm-dev/garm/runtime/wire"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// This test lives inside the package to make micro fail part-way through a
// start; it cannot use garmtooltest (which imports this package), so it
// starts its own server.
func TestAPartialStartStopsWhatStarted(t *testing.T) {
	srv, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: natsserver.RANDOM_PORT, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)

	var started []micro.Service
	addService = func(nc *nats.Conn, config micro.Config) (micro.Service, error) {
		if len(started) == 2 {
			return nil, errors.New("injected failure")
		}
		ms, err := micro.AddService(nc, config)
		if err == nil {
			started = append(started, ms)
		}
		return ms, err
	}
	t.Cleanup(func() { addService = micro.AddService })

	ref := toolbind.ToolRef{
		FQN: "test.v1.echo", Subject: "test.v1.Echo.Echo", Method: "/test.v1.Echo/Echo", Service: "test.v1.Echo",
		ContractVersion: "1.0.0", DescriptorHash: strings.Repeat("a", 64),
	}
	svc := New("test", "1.0.0", WithConcurrency(3))
	if err := svc.Endpoint(ref, func() proto.Message { return new(wrapperspb.StringValue) },
		func(_ context.Context, req proto.Message) (proto.Message, error) { return req, nil }); err != nil {
		t.Fatal(err)
	}
	err = svc.Run(context.Background(), nc)
	if err == nil || !strings.Contains(err.Error(), "starting instance 3") || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("Run = %v, want the third instance's failure", err)
	}
	if len(started) != 2 {
		t.Fatalf("%d instances started, want 2", len(started))
	}
	for i, ms := range started {
		if !ms.Stopped() {
			t.Errorf("instance %d was left running", i+1)
		}
	}
	for _, subject := range []string{"$SRV.PING." + wire.ServiceName(ref.Service), ref.Subject} {
		if _, err := nc.Request(subject, nil, 10*time.Second); !errors.Is(err, nats.ErrNoResponders) {
			t.Errorf("%s after a failed start: %v, want no responders", subject, err)
		}
	}
	select {
	case <-svc.Ready():
		t.Error("a service that failed to start says it is ready")
	default:
	}
}
