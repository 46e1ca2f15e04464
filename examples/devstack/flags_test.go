package main

import (
	"io"
	"strings"
	"testing"
)

func TestTheFlagsRefuseAListenerOffLoopback(t *testing.T) {
	for _, flag := range []string{"--nats-listen", "--idp-listen", "--listen", "--admin-listen", "--approvals-listen"} {
		for _, addr := range []string{"0.0.0.0:7440", ":7440", "[::]:7440", "192.168.1.10:7440", "example.com:7440", "127.0.0.1", ""} {
			t.Run(flag+"="+addr, func(t *testing.T) {
				_, err := parseFlags([]string{flag, addr}, io.Discard, io.Discard)
				if err == nil {
					t.Fatalf("%s %q was accepted", flag, addr)
				}
				if !strings.Contains(err.Error(), flag) {
					t.Errorf("the refusal does not name %s: %v", flag, err)
				}
			})
		}
	}
}

func TestTheFlagsAcceptLoopback(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "127.0.0.2:7440", "[::1]:7440", "localhost:7440", "LOCALHOST:0"} {
		o, err := parseFlags([]string{"--listen", addr, "--nats-listen", addr, "--idp-listen", addr, "--admin-listen", addr}, io.Discard, io.Discard)
		if err != nil {
			t.Errorf("%s: %v", addr, err)
			continue
		}
		if o.Listen != addr || o.AdminListen != addr || o.IdPListen != addr || o.NATSListen != addr {
			t.Errorf("%s: the options are %+v", addr, o)
		}
	}
}

func TestTheFlagsDefaultToSpecEightsAddresses(t *testing.T) {
	o, err := parseFlags(nil, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := Options{NATSListen: "127.0.0.1:4222", IdPListen: "127.0.0.1:7450", Listen: "127.0.0.1:7440", AdminListen: "127.0.0.1:7441"}
	if o.NATSListen != want.NATSListen || o.IdPListen != want.IdPListen || o.Listen != want.Listen || o.AdminListen != want.AdminListen {
		t.Errorf("the defaults are %+v, want %+v", o, want)
	}
	if o.ApprovalsListen != "127.0.0.1:7451" {
		t.Errorf("the approvals inbox defaults to %q", o.ApprovalsListen)
	}
	if o.Ledger != nil || o.Verbose || o.DataDir != "" {
		t.Errorf("--ledger, --verbose or --data is on by default: %+v", o)
	}
}

func TestTheFlagsRefuseStrayArguments(t *testing.T) {
	if _, err := parseFlags([]string{"serve"}, io.Discard, io.Discard); err == nil {
		t.Error("a stray argument was accepted")
	}
}

func TestStartRefusesAListenerOffLoopback(t *testing.T) {
	o := testOptions(t)
	o.Listen = "0.0.0.0:0"
	if s, err := Start(t.Context(), o); err == nil {
		_ = s.Close(t.Context())
		t.Fatal("Start listened on 0.0.0.0")
	}
}
