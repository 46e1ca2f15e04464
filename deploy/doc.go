// Package deploy holds what an operator installs garm from, each in its own
// folder: systemd units (systemd/), Prometheus alerting rules and a Grafana
// dashboard (prometheus/), the tool that builds garmd's and garm-approvals'
// OCI images (image/), and the YAML configuration file both commands read,
// whose keys are their flags (configfile/). This package's own test holds
// `make install` to its promise: each command it installs prints the
// version it was stamped with from git, not "dev".
package deploy
