package devplane

import (
	"flag"
	"io"
	"testing"
)

func parseListenFlags(t *testing.T, args ...string) (Options, error) {
	t.Helper()
	o := DefaultOptions()
	flags := flag.NewFlagSet("test", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	apply := ListenFlags(flags, &o)
	if err := flags.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o, apply()
}

func TestPortsFromMovesEveryListenerAndASingleFlagStillOverridesIt(t *testing.T) {
	t.Parallel()
	o, err := parseListenFlags(t, "--ports-from", "9000", "--nats-listen", "127.0.0.1:4999")
	if err != nil {
		t.Fatal(err)
	}
	want := Options{Listen: "127.0.0.1:9000", AdminListen: "127.0.0.1:9001", DevListen: "127.0.0.1:9002",
		IdPListen: "127.0.0.1:9003", ApprovalsListen: "127.0.0.1:9004", NATSListen: "127.0.0.1:4999"}
	if o.Listen != want.Listen || o.AdminListen != want.AdminListen || o.DevListen != want.DevListen ||
		o.IdPListen != want.IdPListen || o.ApprovalsListen != want.ApprovalsListen || o.NATSListen != want.NATSListen {
		t.Errorf("got %+v", o)
	}
	if err := o.ValidateListeners(); err != nil {
		t.Errorf("the moved listeners do not validate: %v", err)
	}
}

func TestWithoutPortsFromTheDefaultsAndSingleFlagsStand(t *testing.T) {
	t.Parallel()
	o, err := parseListenFlags(t, "--idp-listen", "127.0.0.1:8000")
	if err != nil {
		t.Fatal(err)
	}
	if o.IdPListen != "127.0.0.1:8000" || o.Listen != DefaultListen || o.NATSListen != DefaultNATSListen {
		t.Errorf("got %+v", o)
	}
}

func TestPortsFromRefusesARangePastTheLastPort(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"65531", "-1"} {
		if _, err := parseListenFlags(t, "--ports-from", base); err == nil {
			t.Errorf("--ports-from %s was accepted", base)
		}
	}
}
