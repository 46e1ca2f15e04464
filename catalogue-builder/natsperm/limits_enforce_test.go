package natsperm_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/natsperm"
	garmd "github.com/garm-dev/garm/daemon"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// garmd's derived permissions count limits as garmd --limits does: a
// counter increment answered with its total, each counter stream's
// configuration read at start, and the clock counter read back; and they
// do not let it purge the counters.
func TestGarmdsPermissionsCountLimitsAndReadTheBusClock(t *testing.T) {
	set := natsperm.Derive(buildRoots(t, calculatorRoot).Artifact)
	url := jetStreamConfServer(t, set)
	operator := connectAs(t, url, "operator")
	opJS, err := jetstream.New(operator.Conn)
	if err != nil {
		t.Fatal(err)
	}
	if err := garmd.CreateLimitStreams(within(t, waitFor), opJS, 1); err != nil {
		t.Fatal(err)
	}
	js := jetStreamAs(t, url, natsperm.GarmdUser)
	for _, name := range wire.LimitStreams() {
		if _, err := js.Stream(within(t, waitFor), name); err != nil {
			t.Fatalf("garmd cannot read %s's configuration: %v", name, err)
		}
	}
	for i := 1; i <= 2; i++ {
		ack, err := js.PublishMsg(within(t, waitFor), &nats.Msg{Subject: "garm.limits.m.tool.id.1.KEY", Header: nats.Header{"Nats-Incr": {"1"}}})
		if err != nil || ack.Value != strconv.Itoa(i) {
			t.Fatalf("garmd's count %d: %v, ack %+v", i, err, ack)
		}
	}
	const clock = "garm.limits.s.clock"
	if _, err := js.PublishMsg(within(t, waitFor), &nats.Msg{Subject: clock, Header: nats.Header{"Nats-Incr": {"0"}}}); err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(within(t, waitFor), wire.LimitSecondStream)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetLastMsgForSubject(within(t, waitFor), clock); err != nil {
		t.Fatalf("garmd cannot read the bus's clock back: %v", err)
	}
	minute, err := js.Stream(within(t, waitFor), wire.LimitMinuteStream)
	if err != nil {
		t.Fatal(err)
	}
	// Refused by the server, the request goes unanswered: a short wait.
	if err := minute.Purge(within(t, time.Second)); err == nil {
		t.Fatal("garmd purged a limit's counters")
	}
}
