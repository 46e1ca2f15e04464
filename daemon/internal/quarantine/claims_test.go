package quarantine_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	calcv1 "github.com/garm-dev/garm/examples/calculator/gen/calc/v1"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// rogue is another bus identity posing in discovery: it answers $SRV.PING
// as the instance ping names and, on that instance's own INFO subject (the
// only one a tool identity may answer, docs/operators.md "Securing the
// bus"), with info. A nil info is never answered.
func serveRogue(t *testing.T, url string, ping micro.ServiceIdentity, info *micro.Info) {
	t.Helper()
	nc := connect(t, url)
	pong, _ := json.Marshal(micro.Ping{ServiceIdentity: ping, Type: micro.PingResponseType})
	if _, err := nc.Subscribe("$SRV.PING", func(m *nats.Msg) { _ = m.Respond(pong) }); err != nil {
		t.Fatal(err)
	}
	if info != nil {
		answer, _ := json.Marshal(info)
		if _, err := nc.Subscribe("$SRV.INFO."+ping.Name+"."+ping.ID, func(m *nats.Msg) { _ = m.Respond(answer) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// rogueInfo is an INFO answer as the service named, advertising otherHash
// and claiming every calculator tool's subject.
func rogueInfo(name, id string) *micro.Info {
	info := &micro.Info{
		ServiceIdentity: micro.ServiceIdentity{Name: name, ID: id, Version: "0.1.0",
			Metadata: map[string]string{wire.IdentityMetadata: otherHash}},
		Type: micro.InfoResponseType,
	}
	for _, ref := range calcv1.CalculatorTools {
		subject := wire.Subject(ref.Method)
		info.Endpoints = append(info.Endpoints, micro.EndpointInfo{Name: wire.EndpointName(subject), Subject: subject, QueueGroup: ref.Service})
	}
	return info
}

// A service of another package cannot quarantine the calculator by
// claiming its tools with a wrong hash: only calc.v1's own services speak
// for calc.v1, and the claim is logged, once.
func TestAServiceClaimingAnotherPackagesToolsDoesNotQuarantineItAndIsLogged(t *testing.T) {
	srv := garmtooltest.StartServer(t)
	g := calculatorGeneration(t)
	serveCalculator(t, srv.URL(), calcv1.DescriptorHash)
	rogue := micro.ServiceIdentity{Name: "evil_v1_Tools", ID: "ROGUE1", Version: "0.1.0"}
	serveRogue(t, srv.URL(), rogue, rogueInfo(rogue.Name, rogue.ID))
	var logs bytes.Buffer
	r := newReconciler(t, srv.URL(), &logs)

	for range 2 {
		v := sweep(t, r, g)
		if reason, ok := v.Quarantined("calc.v1"); ok {
			t.Fatalf("another package's service quarantined calc.v1: %s", reason)
		}
		if !v.Complete {
			t.Error("the round was not complete")
		}
	}
	add := wire.Subject(calcv1.CalculatorTools[0].Method)
	var warned int
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, "another package's tool") &&
			strings.Contains(line, "service=evil_v1_Tools") && strings.Contains(line, "instance=ROGUE1") &&
			strings.Contains(line, "subject="+add+" ") && strings.Contains(line, "package=calc.v1") {
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("the claim on %s was warned of %d times over two rounds, want once:\n%s", add, warned, logs.String())
	}
}

// A service cannot borrow the calculator's name in the body of its own
// INFO answer: the answer must be the instance's that was asked.
func TestAnInfoAnswerNamingAnotherServiceIsNotBelieved(t *testing.T) {
	srv := garmtooltest.StartServer(t)
	g := calculatorGeneration(t)
	serveCalculator(t, srv.URL(), calcv1.DescriptorHash)
	rogue := micro.ServiceIdentity{Name: "evil_v1_Tools", ID: "ROGUE1", Version: "0.1.0"}
	serveRogue(t, srv.URL(), rogue, rogueInfo("calc_v1_Calculator", "ROGUE1"))
	var logs bytes.Buffer
	v := sweep(t, newReconciler(t, srv.URL(), &logs), g)
	if reason, ok := v.Quarantined("calc.v1"); ok {
		t.Fatalf("a borrowed name quarantined calc.v1: %s", reason)
	}
	if l := logs.String(); !strings.Contains(l, "naming another service") || !strings.Contains(l, "answered_service=calc_v1_Calculator") {
		t.Errorf("the borrowed name is not logged:\n%s", l)
	}
}

// Another identity cannot hold the calculator's quarantine in place: a PING
// answer naming a calculator instance that does not exist, or an instance
// of its own that never answers INFO, leaves the calculator's lift to the
// calculator's own services.
func TestAnotherIdentityCannotStopTheCalculatorsQuarantineBeingLifted(t *testing.T) {
	srv := garmtooltest.StartServer(t)
	g := calculatorGeneration(t)
	r := newReconciler(t, srv.URL(), nil)
	stopWrong := serveCalculator(t, srv.URL(), otherHash)
	if _, ok := sweep(t, r, g).Quarantined("calc.v1"); !ok {
		t.Fatal("calc.v1 is not quarantined")
	}
	// Anyone may answer PING with any name, but only the calculator's
	// services are on the calculator's INFO subjects.
	serveRogue(t, srv.URL(), micro.ServiceIdentity{Name: "calc_v1_Calculator", ID: "GHOST1", Version: "0.1.0"}, nil)
	serveMute(t, srv.URL(), "evil_v1_Tools")
	stopWrong()
	serveCalculator(t, srv.URL(), calcv1.DescriptorHash)
	v := sweep(t, r, g)
	if reason, ok := v.Quarantined("calc.v1"); ok {
		t.Fatalf("the quarantine was held in place by another identity: %s", reason)
	}
	if !v.Complete {
		t.Error("another identity made the round incomplete")
	}
}
