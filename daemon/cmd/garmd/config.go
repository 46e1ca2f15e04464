package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	garmd "github.com/garm-dev/garm/daemon"
	"github.com/garm-dev/garm/deploy/configfile"
)

// secretPathEnv are the environment variables garmd reads, each the path of
// a secret's file and the flag it sets: the environment names where a
// secret is (a systemd credentials directory, a mounted volume), never the
// secret.
var secretPathEnv = map[string]string{
	"GARMD_HASH_KEY_FILE":           "hash-key-file",
	"GARMD_APPROVAL_STATE_KEY_FILE": "approval-state-key-file",
	"GARMD_NATS_CREDS":              "nats-creds",
	"GARMD_NATS_NKEY":               "nats-nkey",
	"GARMD_NATS_USER_FILE":          "nats-user-file",
	"GARMD_NATS_TLS_KEY":            "nats-tls-key",
	"GARMD_TLS_KEY":                 "tls-key",
}

// loadConfig turns `garmd serve`'s (or `garmd config`'s) arguments, the
// environment and the --config file into a Config: flags win over the
// environment, the environment over the file, the file over the defaults.
// It returns the file's and the environment's problems; err is the command
// line's own error, already printed (flag.ErrHelp for --help).
func loadConfig(name string, args []string, stderr io.Writer) (garmd.Config, *flag.FlagSet, []string, error) {
	cfg := garmd.DefaultConfig()
	fs := serveFlags(&cfg, stderr)
	fs.Init(name, flag.ContinueOnError)
	problems, err := configfile.Parse(fs, args, secretPathEnv, os.Getenv)
	if err != nil {
		return cfg, fs, nil, err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", name, fs.Arg(0))
		return cfg, fs, nil, errUsage
	}
	return cfg, fs, problems, nil
}

// allProblems adds Validate's problems to the file's: every one at once.
func allProblems(cfg garmd.Config, fileProblems []string) error {
	problems := append([]string(nil), fileProblems...)
	var ce *garmd.ConfigError
	if err := cfg.Validate(); errors.As(err, &ce) {
		problems = append(problems, ce.Problems...)
	} else if err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) == 0 {
		return nil
	}
	return &garmd.ConfigError{Problems: problems}
}

// printConfig is `garmd config`: the effective configuration, as a file
// --config reads back, on stdout; then every problem on stderr.
func printConfig(args []string, stdout, stderr io.Writer) int {
	cfg, fs, problems, err := loadConfig("garmd config", args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if err := configfile.Effective(stdout, fs); err != nil {
		fmt.Fprintln(stderr, "garmd config:", err)
		return exitFailed
	}
	if err := allProblems(cfg, problems); err != nil {
		fmt.Fprintln(stderr, err)
		return exitFailed
	}
	return exitOK
}

// errUsage is a command line the flag package accepted but garmd does not.
var errUsage = errors.New("usage")
