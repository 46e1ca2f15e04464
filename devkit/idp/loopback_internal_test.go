package idp

import (
	"net"
	"testing"
)

func TestOnlyLoopbackHostsAreAskedFor(t *testing.T) {
	cases := map[string]bool{
		"127.0.0.1:0": true, "127.1.2.3:7450": true, "[::1]:0": true, "localhost:7450": true,
		":0": false, "0.0.0.0:0": false, "[::]:0": false, "10.0.0.1:0": false, "[::ffff:10.0.0.1]:0": false,
		"example.com:0": false, "LOCALHOST:0": true, "127.0.0.1": false, "": false,
	}
	for addr, ok := range cases {
		if err := checkLoopbackHost(addr); (err == nil) != ok {
			t.Errorf("checkLoopbackHost(%q) = %v, want ok=%v", addr, err, ok)
		}
	}
}

// A name like localhost is resolved by the system, so the bound address is checked too.
func TestOnlyLoopbackAddressesAreServedOn(t *testing.T) {
	cases := []struct {
		addr net.Addr
		ok   bool
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7450}, true},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 7450}, true},
		{&net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 7450}, false},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 7450}, false},
		{&net.UnixAddr{Name: "/tmp/idp.sock", Net: "unix"}, false},
	}
	for _, c := range cases {
		if err := checkLoopbackAddr(c.addr); (err == nil) != c.ok {
			t.Errorf("checkLoopbackAddr(%s) = %v, want ok=%v", c.addr, err, c.ok)
		}
	}
}
