package devplane

import (
	"flag"
	"fmt"
	"net"
	"strconv"
)

// listener is one address a plane command listens on, its flag, and its
// offset from --ports-from.
type listener struct {
	flag, usage string
	offset      int
	addr        func(*Options) *string
}

// listeners are in the order --ports-from numbers them: garmd's three
// first, as the defaults are (design 8).
var listeners = []listener{
	{"listen", "garmd's tool plane `address` (loopback)", 0, func(o *Options) *string { return &o.Listen }},
	{"admin-listen", "garmd's admin `address`: health, readiness, metrics (loopback)", 1, func(o *Options) *string { return &o.AdminListen }},
	{"dev-listen", "the dev endpoint's `address` (loopback): ledger rows by event id, for garm call", 2, func(o *Options) *string { return &o.DevListen }},
	{"idp-listen", "the dev identity provider's `address` (loopback)", 3, func(o *Options) *string { return &o.IdPListen }},
	{"approvals-listen", "the approvals service's inbox `address` (loopback)", 4, func(o *Options) *string { return &o.ApprovalsListen }},
	{"nats-listen", "the embedded NATS server's `address` (loopback)", 5, func(o *Options) *string { return &o.NATSListen }},
}

// ListenFlags registers every plane command's listener flags on flags,
// writing into o, and --ports-from, which moves them all off the defaults
// at once. Call the returned function after flags.Parse: it applies
// --ports-from to each listener whose own flag was not given, so a single
// flag still overrides it.
func ListenFlags(flags *flag.FlagSet, o *Options) func() error {
	for _, l := range listeners {
		flags.StringVar(l.addr(o), l.flag, *l.addr(o), l.usage)
	}
	last := len(listeners) - 1
	base := flags.Int("ports-from", 0, fmt.Sprintf("listen on 127.0.0.1 from this `port` on, one each: --listen, --admin-listen, --dev-listen, --idp-listen, --approvals-listen, --nats-listen in that order (%d ports); a listener's own flag overrides it", last+1))
	return func() error {
		if *base == 0 {
			return nil
		}
		if *base < 1 || *base+last > 65535 {
			return fmt.Errorf("--ports-from %d: the %d ports from it must lie within 1-65535", *base, last+1)
		}
		set := map[string]bool{}
		flags.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for _, l := range listeners {
			if !set[l.flag] {
				*l.addr(o) = net.JoinHostPort("127.0.0.1", strconv.Itoa(*base+l.offset))
			}
		}
		return nil
	}
}
