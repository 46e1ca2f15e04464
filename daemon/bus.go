package garmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
)

// garmd's own name on the bus: its user in the derived permissions
// (garm-catalogue nats-permissions), and the second token of its inbox
// prefix, so its replies arrive where only it may subscribe.
const (
	busUser        = "garmd"
	busInboxPrefix = "_INBOX." + busUser
)

// askTimeout bounds the question garmd asks the server about its own
// permissions at startup.
const askTimeout = 2 * time.Second

// busProblems are the problems of the bus flags: the URL, and the files
// that hold the credentials and TLS material. Secrets come only from
// files, never from a flag's value.
func (c Config) busProblems() []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	problems = append(problems, seedProblems(c.NATS)...)
	var given []string
	for _, f := range []struct{ flag, path string }{
		{"--nats-creds", c.NATSCreds}, {"--nats-nkey", c.NATSNKey}, {"--nats-user-file", c.NATSUserFile},
	} {
		if f.path != "" {
			given = append(given, f.flag)
		}
	}
	if len(given) > 1 {
		add("%s are given together; garmd authenticates to the bus one way", strings.Join(given, " and "))
	}
	if c.NATSUserFile != "" {
		if _, _, err := readUserFile(c.NATSUserFile); err != nil {
			add("--nats-user-file: %v", err)
		}
	}
	for _, f := range []struct{ flag, path string }{
		{"--nats-creds", c.NATSCreds}, {"--nats-nkey", c.NATSNKey},
		{"--nats-tls-ca", c.NATSTLSCA}, {"--nats-tls-cert", c.NATSTLSCert}, {"--nats-tls-key", c.NATSTLSKey},
	} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			add("%s: %v", f.flag, err)
		}
	}
	if (c.NATSTLSCert == "") != (c.NATSTLSKey == "") {
		add("--nats-tls-cert and --nats-tls-key go together: a client certificate needs its key")
	}
	return problems
}

// busSeeds are the URLs of a --nats seed list, split as nats.go splits
// them: at commas, each trimmed, empty ones dropped. garmd connects to the
// first that answers and learns the rest of the cluster from it.
func busSeeds(list string) []string {
	var seeds []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			seeds = append(seeds, s)
		}
	}
	return seeds
}

// seedProblems checks every URL of a --nats seed list the same way.
func seedProblems(list string) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	seeds := busSeeds(list)
	if len(seeds) == 0 {
		add("--nats is empty: give the bus's URL, or a comma-separated list of its servers' URLs")
	}
	schemes := map[string]bool{}
	for i, seed := range seeds {
		flag := "--nats"
		if len(seeds) > 1 {
			flag = fmt.Sprintf("--nats seed #%d", i+1)
		}
		u, err := url.Parse(seed)
		switch {
		case err != nil || u.Host == "" || (u.Scheme != "nats" && u.Scheme != "tls"):
			// The URL is not echoed: one with user information may carry a secret.
			add("%s is not a nats:// or tls:// URL", flag)
			continue
		case u.User != nil:
			add("%s carries credentials in the URL; give them in a file instead: --nats-user-file (user and password), --nats-nkey or --nats-creds", flag)
		}
		schemes[u.Scheme] = true
	}
	if len(schemes) > 1 {
		add("--nats mixes nats:// and tls:// seeds; garmd's connection is encrypted to every server or to none")
	}
	return problems
}

// readUserFile reads a --nats-user-file: the user on its first line, the
// password on its second, surrounding white space trimmed.
func readUserFile(path string) (user, password string, err error) {
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

// busAuth says how garmd authenticates to the bus, for the report.
func (c Config) busAuth() string {
	switch {
	case c.NATSCreds != "":
		return "a user JWT and nkey seed from " + c.NATSCreds + " (--nats-creds)"
	case c.NATSNKey != "":
		return "an nkey seed from " + c.NATSNKey + " (--nats-nkey)"
	case c.NATSUserFile != "":
		user, _, _ := readUserFile(c.NATSUserFile)
		return fmt.Sprintf("user %q and password from %s (--nats-user-file)", user, c.NATSUserFile)
	}
	return "no credentials"
}

// busOptions are the options of garmd's connection to the bus: its
// credentials and TLS from the files the flags name, its own inbox prefix,
// and reconnecting for as long as it runs.
func (c Config) busOptions(closed chan struct{}, logger *slog.Logger) ([]nats.Option, error) {
	opts := []nats.Option{
		nats.ClosedHandler(func(*nats.Conn) { close(closed) }),
		// What the server refuses garmd — a permissions violation above all —
		// is said in garmd's log, naming the subject, not lost.
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			logger.Warn("garmd: the bus refused", "err", err)
		}),
		nats.Name("garmd"),
		nats.Timeout(connectTimeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		// No reconnect buffer: a write made while the bus is away fails at
		// once, definitely unwritten, instead of being applied after garmd
		// answered the call (decision 0034).
		nats.ReconnectBufSize(-1),
		nats.CustomInboxPrefix(busInboxPrefix),
	}
	switch {
	case c.NATSCreds != "":
		opts = append(opts, nats.UserCredentials(c.NATSCreds))
	case c.NATSNKey != "":
		opt, err := nats.NkeyOptionFromSeed(c.NATSNKey)
		if err != nil {
			return nil, fmt.Errorf("--nats-nkey: %w", err)
		}
		opts = append(opts, opt)
	case c.NATSUserFile != "":
		user, password, err := readUserFile(c.NATSUserFile)
		if err != nil {
			return nil, fmt.Errorf("--nats-user-file: %w", err)
		}
		opts = append(opts, nats.UserInfo(user, password))
	}
	if c.NATSTLSCA != "" {
		opts = append(opts, nats.RootCAs(c.NATSTLSCA))
	}
	if c.NATSTLSCert != "" {
		opts = append(opts, nats.ClientCert(c.NATSTLSCert, c.NATSTLSKey))
	}
	return opts, nil
}

// connect dials the bus with cfg's credentials and TLS; closed is closed
// when the connection is closed for good.
func connect(cfg Config, closed chan struct{}, logger *slog.Logger) (*nats.Conn, error) {
	opts, err := cfg.busOptions(closed, logger)
	if err != nil {
		return nil, err
	}
	opts = append(opts, busEventHandlers(logger)...)
	nc, err := nats.Connect(cfg.NATS, opts...)
	if err != nil {
		return nil, fmt.Errorf("--nats %s (authenticating with %s): %w", cfg.NATS, cfg.busAuth(), err)
	}
	return nc, nil
}

// busTLS says whether the connection is encrypted, for the report.
func busTLS(nc *nats.Conn) string {
	state, err := nc.TLSConnectionState()
	if err != nil {
		return "off: the bus connection is not encrypted (tls:// or --nats-tls-ca turns it on)"
	}
	return fmt.Sprintf("on (TLS 1.%d)", state.Version-0x0301)
}

// userInfo is the server's answer on $SYS.REQ.USER.INFO: the asking
// connection's own user and permissions.
type userInfo struct {
	Data *struct {
		User        string `json:"user"`
		Account     string `json:"account"`
		Permissions *struct {
			Publish *struct {
				Allow []string `json:"allow"`
				Deny  []string `json:"deny"`
			} `json:"publish"`
		} `json:"permissions"`
	} `json:"data"`
	Error *struct {
		Description string `json:"description"`
	} `json:"error"`
}

// spentGrantsAccess is what garmd can learn of who may write or forget
// the spent grants, as startup report lines; warn says whether any is a
// warning. A client sees only its own permissions, so garmd asks about
// itself and says that it cannot ask about anyone else.
func spentGrantsAccess(ctx context.Context, nc *nats.Conn) (lines []string, warn bool) {
	const bucket = wire.GrantsSpentBucket
	if !nc.AuthRequired() {
		return []string{fmt.Sprintf("the bus asks no credentials: any client that reaches it can write %s (and forget a spent grant), call tools directly and write the ledger; secure it (docs/operators.md, Securing the bus)", bucket)}, true
	}
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	others := fmt.Sprintf("whether users other than garmd can write %s cannot be asked of the server (a client sees only its own permissions): give them the permissions garm-catalogue nats-permissions derives", bucket)
	msg, err := nc.RequestWithContext(ctx, "$SYS.REQ.USER.INFO", nil)
	var info userInfo
	if err == nil {
		err = json.Unmarshal(msg.Data, &info)
	}
	if err == nil && info.Error != nil {
		err = fmt.Errorf("%s", info.Error.Description)
	}
	if err != nil || info.Data == nil {
		return []string{fmt.Sprintf("the server did not say what garmd's own user may do ($SYS.REQ.USER.INFO: %v)", err), others}, false
	}
	self := fmt.Sprintf("garmd is user %q of account %q", info.Data.User, info.Data.Account)
	purge := "$JS.API.STREAM.PURGE.KV_" + bucket
	var allow, deny []string
	unrestricted := info.Data.Permissions == nil || info.Data.Permissions.Publish == nil
	if !unrestricted {
		allow, deny = info.Data.Permissions.Publish.Allow, info.Data.Permissions.Publish.Deny
	}
	if (unrestricted || len(allow) == 0 || wire.Covers(allow, purge)) && !wire.Covers(deny, purge) {
		return []string{self + fmt.Sprintf(", which may purge %s (%s) and so make every spent grant spendable again; give it the permissions garm-catalogue nats-permissions derives", bucket, purge), others}, true
	}
	return []string{self + fmt.Sprintf(", which may not purge %s", bucket), others}, false
}
