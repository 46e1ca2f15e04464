// Package loopback is the one guard every listener of the dev plane is served behind: the dev
// identity provider, the approvals service as the plane runs it, the dev endpoint, garmd's tool
// plane and admin listener in dev, the round-robin front of a cluster, and the garmd replicas a
// cluster runs as processes of their own (garmd --loopback-hosts-only) (decision 0087). It lives
// outside devkit so that garmd, which reaches no devkit code, applies the very same check.
//
// It owns [HostAllowed], the loopback Host allowlist, and [Guard], the handler that applies it
// and refuses cross-origin state changes. [Guard] refuses, with 403 and a fixed body that never
// repeats what was sent:
//
//   - a request whose Host is not a literal loopback IP (127.0.0.0/8, ::1) or "localhost", with
//     or without a port; an empty Host too;
//   - a request whose method changes state (anything but GET, HEAD and OPTIONS) that a browser
//     marks as cross-origin: Sec-Fetch-Site other than same-origin or none, or, from a browser
//     that does not send it, an Origin whose host is not the Host
//     (net/http's CrossOriginProtection, the check garmd's MCP endpoint makes).
//
// Why: the dev plane listens on loopback only, but a web page the developer opens can still
// reach it. A page whose name it rebinds to 127.0.0.1 after loading is same-origin with the
// plane as far as the browser knows, and reads what it asks for; only the Host it sends, its
// own name, tells it apart. A page on another origin cannot read answers, but it can send a
// form; the Origin check refuses what such a form would change. A program on the machine (curl,
// `garm call`, garmd fetching the key set) sends a loopback Host and no Origin, and passes.
//
// What is deliberately not here: names other than localhost are not resolved (what a name means
// can change after the check), and no configuration widens the list: a deployment's listeners
// are guarded by what stands before them; garmd applies this guard only when told to
// (--loopback-hosts-only), as the dev plane tells it.
package loopback
