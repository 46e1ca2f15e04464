package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// secretPathEnv are the environment variables garm-approvals reads, each the path of a secret's
// file and the flag it sets (decision 0100): never a secret itself.
var secretPathEnv = map[string]string{
	"GARM_APPROVALS_KEY_FILE":                "key",
	"GARM_APPROVALS_OIDC_CLIENT_SECRET_FILE": "oidc-client-secret-file",
	"GARM_APPROVALS_NATS_CREDS":              "nats-creds",
	"GARM_APPROVALS_NATS_NKEY":               "nats-nkey",
	"GARM_APPROVALS_NATS_USER_FILE":          "nats-user-file",
	"GARM_APPROVALS_NATS_TLS_KEY":            "nats-tls-key",
}

// stdout is where `garm-approvals config` prints; a variable so that tests can read it.
var stdout io.Writer = os.Stdout

// printConfig is `garm-approvals config`: the configuration the service would run with, as a
// --config file reads it back, on stdout; then every problem on stderr.
func printConfig(args []string, stderr io.Writer) int {
	if _, err := parse(args, stderr, true); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "garm-approvals:", err)
		}
		return 2
	}
	return 0
}
