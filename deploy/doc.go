// Package deploy holds what an operator installs garm from, each in its own
// folder: systemd units (systemd/), Prometheus alerting rules and a Grafana
// dashboard (prometheus/), the tool that builds garmd's and garm-approvals'
// OCI images (image/), and the YAML configuration file both commands read,
// whose keys are their flags (configfile/). This package's own tests hold
// `make install` to its promise — each command it installs prints the
// version it was stamped with from git, not "dev" — and run the operators'
// TLS recipe in docs/operators.md as written: its marked blocks, extracted
// from the document, in one shell, against a real nats-server with TLS and
// the derived permissions, with garmd, a tool service and garm-approvals as
// processes of their own, ending in a governed call.
package deploy
