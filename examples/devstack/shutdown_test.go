package main

import (
	"context"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// closeBound is how long Close may take on an idle stack.
const closeBound = 15 * time.Second

// TestCloseFreesEveryPortAndAReusedDataDirStartsAgain starts a stack with
// --data, closes it, checks that Close returned within a bound and that
// every port it held is free, then starts a second stack on the very same
// ports and data directory: the streams and bucket already exist, and
// creating them again is accepted.
func TestCloseFreesEveryPortAndAReusedDataDirStartsAgain(t *testing.T) {
	data := t.TempDir()
	o := testOptions(t)
	o.DataDir = data
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	first, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	urls := first.URLs()
	runDir := filepath.Dir(urls.NATSSeeds) // the seeds live in the temporary directory
	c := newClient(t, first)
	c.token(bankDemo().support, "") // the stack answers

	began := time.Now()
	closeCtx, cancelClose := context.WithTimeout(context.Background(), closeBound)
	defer cancelClose()
	if err := first.Close(closeCtx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if took := time.Since(began); took > closeBound {
		t.Errorf("Close took %s, more than %s", took, closeBound)
	}
	if err := first.Wait(); err != nil {
		t.Errorf("Wait after Close answered %v, want nil", err)
	}
	if err := first.Close(closeCtx); err != nil {
		t.Errorf("a second Close answered %v", err)
	}
	addrs := map[string]string{"garmd": host(t, urls.Garmd), "admin": host(t, urls.Admin), "IdP": host(t, urls.IdP), "NATS": host(t, urls.NATS), "dev": host(t, urls.Dev), "approvals": host(t, urls.Approvals)}
	for name, addr := range addrs {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("the %s port %s is still held after Close: %v", name, addr, err)
			continue
		}
		l.Close()
	}
	if _, err := os.Stat(runDir); !os.IsNotExist(err) {
		t.Errorf("the temporary directory %s is still there after Close (%v)", runDir, err)
	}
	if entries, err := os.ReadDir(data); err != nil || len(entries) == 0 {
		t.Errorf("the --data directory was emptied or removed: %v %v", entries, err)
	}
	if _, err := os.Stat(filepath.Join(data, "jetstream")); err != nil {
		t.Errorf("JetStream kept nothing in --data: %v", err)
	}

	o.NATSListen, o.IdPListen, o.Listen, o.AdminListen, o.DevListen = addrs["NATS"], addrs["IdP"], addrs["garmd"], addrs["admin"], addrs["dev"]
	o.ApprovalsListen = addrs["approvals"]
	second := startStack(t, o)
	got := second.URLs()
	got.NATSSeeds = urls.NATSSeeds // fresh seeds in a fresh temporary directory each run
	if !reflect.DeepEqual(got, urls) {
		t.Errorf("the second stack answers at %+v, want %+v", second.URLs(), urls)
	}
	newClient(t, second).token(bankDemo().support, "")
}

// host is the host:port of a URL.
func host(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
