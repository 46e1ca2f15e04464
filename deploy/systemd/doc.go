// Package systemd holds garmd's and garm-approvals' systemd units, and the
// tests that hold them to their hardening: `systemd-analyze verify` (Debian's
// systemd) must accept each without a warning, and each must keep the
// settings an operator relies on (no new privileges, a read-only system, a
// private /tmp, a user that is not root, a restart policy, no capabilities).
//
// The units read their configuration from /etc/garm and their secrets from
// systemd's credentials directory; the environment carries only the
// secrets' paths (docs/operators.md, "Installing as a service").
package systemd
