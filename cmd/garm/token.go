package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/garm-dev/garm/devkit/devplane"
	"github.com/garm-dev/garm/devkit/idp"
)

// requestTimeout bounds each request garm makes to the plane.
const requestTimeout = 30 * time.Second

// defaultIdP is where garm dev's identity provider answers; GARM_IDP
// overrides it.
var defaultIdP = "http://" + devplane.DefaultIdPListen

// runToken prints a token for a persona, acting through an agent with
// --agent. --as, which garm call reads as the persona, is kept here as a
// deprecated alias of --agent that says so (decision 0116).
func runToken(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("garm token", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: garm token PERSONA [--agent AGENT] [--idp URL]\n\nPrints a token from the dev identity provider. Flags:")
		flags.PrintDefaults()
	}
	agent := flags.String("agent", "", "the `agent` acting for the persona (the token's act claim)")
	as := flags.String("as", "", "deprecated: use --agent (garm call's --as is the persona)")
	idpURL := flags.String("idp", envOr("GARM_IDP", defaultIdP), "the dev identity provider's `URL` ($GARM_IDP)")
	persona, rest := leadingArg(args)
	if err := flags.Parse(rest); errors.Is(err, flag.ErrHelp) {
		return exitOK
	} else if err != nil {
		return exitUsage
	}
	if persona == "" && flags.NArg() == 1 {
		persona = flags.Arg(0)
	} else if flags.NArg() > 0 || persona == "" {
		flags.Usage()
		return exitUsage
	}
	if *as != "" {
		fmt.Fprintln(stderr, "garm token: --as is deprecated here, where it names the agent, not the persona as in garm call; use --agent "+*as)
		if *agent != "" && *agent != *as {
			fmt.Fprintln(stderr, "garm token: --as and --agent name different agents")
			return exitUsage
		}
		*agent = *as
	}
	token, err := fetchToken(ctx, *idpURL, persona, *agent)
	if err != nil {
		fmt.Fprintln(stderr, "garm token:", err)
		return exitFailed
	}
	fmt.Fprintln(stdout, token)
	return exitOK
}

// leadingArg splits off the first argument when it is not a flag, so that
// `garm token alice --agent bot` reads as `garm token --agent bot alice`.
func leadingArg(args []string) (string, []string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "", args
}

// fetchToken asks the dev identity provider at base for a token.
func fetchToken(ctx context.Context, base, user, as string) (string, error) {
	q := url.Values{"user": {user}}
	if as != "" {
		q.Set("as", as)
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+idp.TokenPath+"?"+q.Encode(), nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("%w (is garm dev or garm idp running?)", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return strings.TrimSpace(string(body)), nil
}

// runIdP runs the dev identity provider alone until interrupted.
func runIdP(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("garm idp", flag.ContinueOnError)
	flags.SetOutput(stderr)
	personasFile := flags.String("personas", "personas.yaml", "the persona `file`")
	listen := flags.String("listen", devplane.DefaultIdPListen, "the `address` to listen on (loopback)")
	issuer := flags.String("issuer", idp.DefaultIssuer, "the iss of its tokens and its OpenID Connect issuer: an absolute `URL`, e.g. http://<--listen> to make it where the provider serves")
	if err := flags.Parse(args); errors.Is(err, flag.ErrHelp) {
		return exitOK
	} else if err != nil || flags.NArg() > 0 {
		return exitUsage
	}
	personas, err := idp.LoadPersonas(*personasFile)
	if err != nil {
		fmt.Fprintln(stderr, "garm idp:", err)
		return exitFailed
	}
	provider, err := idp.New(personas, idp.Options{Issuer: *issuer})
	if err != nil {
		fmt.Fprintln(stderr, "garm idp:", err)
		return exitFailed
	}
	srv, err := provider.Start(*listen)
	if err != nil {
		fmt.Fprintln(stderr, "garm idp:", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "dev identity provider at %s\n  issuer   %s\n  audience %s\n  JWKS     %s\n  token    garm token <persona> --idp %s\n",
		srv.URL(), provider.Issuer(), provider.Audience(), srv.JWKSURL(), srv.URL())
	<-ctx.Done()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		fmt.Fprintln(stderr, "garm idp:", err)
		return exitFailed
	}
	return exitOK
}
