// Package prometheus holds what an operator watches garmd with: alerting
// rules (garmd-alerts.yaml) for what must wake someone — readiness lost,
// JetStream publishes failing (a lost quorum), ledger and audit rows not
// taken, grants refused for bus errors, tools quarantined or unreachable —
// and a Grafana dashboard of garmd's series (garmd-dashboard.json).
//
// This package's test checks the rules with `promtool check rules`
// (Debian's prometheus package). That every series the rules and the
// dashboard name is one garmd exports is held by daemon/cmd/garmd's
// tests, which can read garmd's registry.
package prometheus
