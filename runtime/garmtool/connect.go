package garmtool

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/nats-io/nats.go"
)

// BusFlags are how a tool command reaches a secured bus: the same
// connection flags garmd takes, so one recipe serves both (docs/operators.md,
// "Securing the bus"). Every secret is a file, never a flag's value.
//
//	var bus garmtool.BusFlags
//	bus.Register(flags)
//	…
//	opts, err := bus.ConnectOptions()
//	nc, err := nats.Connect(bus.URL, append(opts, nats.Name("calcd"))...)
type BusFlags struct {
	// URL is the server (--nats); it carries no credentials.
	URL string
	// Creds is a user JWT and nkey seed file (--nats-creds), NKey an nkey
	// seed file (--nats-nkey), UserFile a file with the user on its first
	// line and the password on its second (--nats-user-file). At most one.
	Creds, NKey, UserFile string
	// TLSCA verifies the server (--nats-tls-ca); TLSCert and TLSKey are the
	// client certificate for mutual TLS (--nats-tls-cert, --nats-tls-key).
	TLSCA, TLSCert, TLSKey string
}

// Register binds the flags to fs, with nats.DefaultURL as the URL's
// default unless URL is already set.
func (f *BusFlags) Register(fs *flag.FlagSet) {
	if f.URL == "" {
		f.URL = nats.DefaultURL
	}
	fs.StringVar(&f.URL, "nats", f.URL, "the NATS server to serve on (`url`, without credentials)")
	fs.StringVar(&f.Creds, "nats-creds", "", "`file` with a user JWT and nkey seed")
	fs.StringVar(&f.NKey, "nats-nkey", "", "`file` with an nkey seed")
	fs.StringVar(&f.UserFile, "nats-user-file", "", "`file` with the user on its first line and the password on its second")
	fs.StringVar(&f.TLSCA, "nats-tls-ca", "", "`file` of CA certificates that verify the server (turns TLS on)")
	fs.StringVar(&f.TLSCert, "nats-tls-cert", "", "client certificate `file` for mutual TLS (with --nats-tls-key)")
	fs.StringVar(&f.TLSKey, "nats-tls-key", "", "the client certificate's key `file`")
}

// ConnectOptions are the options that authenticate and encrypt the
// connection as the flags say, or every problem of the flags at once: a
// URL that carries credentials, two ways to authenticate, a certificate
// without its key, a file that cannot be read.
func (f BusFlags) ConnectOptions() ([]nats.Option, error) {
	var problems []error
	for _, server := range strings.Split(f.URL, ",") {
		if u, err := url.Parse(strings.TrimSpace(server)); err == nil && u.User != nil {
			problems = append(problems, errors.New("--nats carries credentials in the URL; give them in a file instead: --nats-user-file, --nats-nkey or --nats-creds"))
			break
		}
	}
	var opts []nats.Option
	ways := 0
	if f.Creds != "" {
		ways++
		if _, err := os.Stat(f.Creds); err != nil {
			problems = append(problems, fmt.Errorf("--nats-creds: %w", err))
		}
		opts = append(opts, nats.UserCredentials(f.Creds))
	}
	if f.NKey != "" {
		ways++
		opt, err := nats.NkeyOptionFromSeed(f.NKey)
		if err != nil {
			problems = append(problems, fmt.Errorf("--nats-nkey: %w", err))
		}
		opts = append(opts, opt)
	}
	if f.UserFile != "" {
		ways++
		user, password, err := ReadUserFile(f.UserFile)
		if err != nil {
			problems = append(problems, fmt.Errorf("--nats-user-file: %w", err))
		}
		opts = append(opts, nats.UserInfo(user, password))
	}
	if ways > 1 {
		problems = append(problems, errors.New("--nats-creds, --nats-nkey and --nats-user-file are each a way to authenticate; give one"))
	}
	if (f.TLSCert == "") != (f.TLSKey == "") {
		problems = append(problems, errors.New("--nats-tls-cert and --nats-tls-key go together: a client certificate needs its key"))
	}
	for _, file := range []struct{ flag, path string }{{"--nats-tls-ca", f.TLSCA}, {"--nats-tls-cert", f.TLSCert}, {"--nats-tls-key", f.TLSKey}} {
		if file.path == "" {
			continue
		}
		if _, err := os.Stat(file.path); err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", file.flag, err))
		}
	}
	if f.TLSCA != "" {
		opts = append(opts, nats.RootCAs(f.TLSCA))
	}
	if f.TLSCert != "" && f.TLSKey != "" {
		opts = append(opts, nats.ClientCert(f.TLSCert, f.TLSKey))
	}
	if err := errors.Join(problems...); err != nil {
		return nil, err
	}
	return opts, nil
}

// Authentication says how the flags authenticate, for a startup log line;
// it names files, never what they hold.
func (f BusFlags) Authentication() string {
	switch {
	case f.Creds != "":
		return "user JWT and nkey seed from " + f.Creds
	case f.NKey != "":
		return "nkey seed from " + f.NKey
	case f.UserFile != "":
		return "user and password from " + f.UserFile
	}
	return "no credentials"
}

// ReadUserFile reads a --nats-user-file: the user on its first non-empty
// line, the password on its second, surrounding white space trimmed.
func ReadUserFile(path string) (user, password string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	var lines []string
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		if line := strings.TrimSpace(s.Text()); line != "" {
			lines = append(lines, line)
		}
	}
	if len(lines) != 2 {
		return "", "", fmt.Errorf("%s holds %d non-empty lines; it holds two: the user, then the password", path, len(lines))
	}
	return lines[0], lines[1], nil
}
