package minter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// DefaultCaseTimeout bounds each case.
const DefaultCaseTimeout = 30 * time.Second

// Config is one run: a suite, the endpoint of the minter under test and
// the driver that speaks its shape. Suite, Endpoint and Driver are
// required.
type Config struct {
	Suite *Suite
	// Endpoint is the minter's base URL (ShapeGet, ShapeApprovals) or its
	// token endpoint's URL (ShapeFormPost); "{endpoint}" in the suite's
	// trust is replaced with it.
	Endpoint string
	Driver   Driver
	// Vars are further "{name}" values for the suite's trust, such as the
	// key set of an STS that serves it elsewhere than at its token
	// endpoint.
	Vars map[string]string
	// Client fetches the key sets; default http.DefaultClient.
	Client *http.Client
	// Out receives one line per case and the summary; default discards.
	Out io.Writer
	// CaseTimeout bounds each case; zero means DefaultCaseTimeout.
	CaseTimeout time.Duration
}

// Result is one case's verdict.
type Result struct {
	Name string
	Kind string
	// Err is why the case failed; nil when it passed.
	Err error
}

// Report is a run's verdicts in the suite's order.
type Report struct {
	Suite   string
	Results []Result
}

// Passed and Failed count the verdicts.
func (r Report) Passed() int { return len(r.Results) - r.Failed() }

// Failed counts the cases that failed.
func (r Report) Failed() int {
	n := 0
	for _, res := range r.Results {
		if res.Err != nil {
			n++
		}
	}
	return n
}

// OK is true when there were cases and every one passed.
func (r Report) OK() bool { return len(r.Results) > 0 && r.Failed() == 0 }

// ErrNothingToCheck is Run's refusal of a run without a suite, a case, an
// endpoint or a driver: a conformance run with nothing to check must not
// report ok.
var ErrNothingToCheck = errors.New("minter: nothing to check")

// Run runs every case of cfg.Suite against the minter, verifying each
// answer with garmd's own verifiers, and prints one line per case and a
// "N passed, N failed" line. It refuses to start (ErrNothingToCheck)
// without a suite with cases, an endpoint and a driver.
func Run(ctx context.Context, cfg Config) (Report, error) {
	switch {
	case cfg.Suite == nil || len(cfg.Suite.Cases) == 0:
		return Report{}, fmt.Errorf("%w: no suite, or a suite without cases", ErrNothingToCheck)
	case cfg.Endpoint == "":
		return Report{}, fmt.Errorf("%w: no minter endpoint", ErrNothingToCheck)
	case cfg.Driver == nil:
		return Report{}, fmt.Errorf("%w: no driver for the minter's shape", ErrNothingToCheck)
	}
	if u, err := url.Parse(cfg.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Report{}, fmt.Errorf("minter: endpoint %q is not an http(s) URL", cfg.Endpoint)
	}
	if err := cfg.Suite.Validate(); err != nil {
		return Report{}, err
	}
	vars := map[string]string{"endpoint": cfg.Endpoint}
	for k, val := range cfg.Vars {
		if k != "endpoint" {
			vars[k] = val
		}
	}
	v, err := newVerifiers(cfg.Suite, vars, cfg.Client)
	if err != nil {
		return Report{}, err
	}
	out, timeout := cfg.Out, cfg.CaseTimeout
	if out == nil {
		out = io.Discard
	}
	if timeout == 0 {
		timeout = DefaultCaseTimeout
	}
	rep := Report{Suite: cfg.Suite.Name}
	for i := range cfg.Suite.Cases {
		c := &cfg.Suite.Cases[i]
		caseCtx, cancel := context.WithTimeout(ctx, timeout)
		err := runCase(caseCtx, cfg.Driver, v, c)
		cancel()
		rep.Results = append(rep.Results, Result{Name: c.Name, Kind: c.Kind, Err: err})
		if err != nil {
			fmt.Fprintf(out, "FAIL %-13s %s: %v\n", c.Kind, c.Name, err)
		} else {
			fmt.Fprintf(out, "ok   %-13s %s\n", c.Kind, c.Name)
		}
	}
	fmt.Fprintf(out, "%s: %d passed, %d failed\n", rep.Suite, rep.Passed(), rep.Failed())
	return rep, nil
}

// runCase is the one thing c asserts: nil when it holds.
func runCase(ctx context.Context, d Driver, v *verifiers, c *Case) error {
	switch c.Kind {
	case KindToken:
		token, err := d.MintToken(ctx, c)
		if err != nil {
			return fmt.Errorf("no token: %v", err)
		}
		return v.token(ctx, token, c.Claims)
	case KindTokenRefused:
		_, err := d.MintToken(ctx, c)
		return isRefusal(err, c.Status)
	case KindGrant:
		g, err := d.MintGrant(ctx, c)
		if err != nil {
			return fmt.Errorf("no grant: %v", err)
		}
		return v.grant(ctx, g, c.For)
	case KindGrantRefused:
		_, err := d.MintGrant(ctx, c)
		return isRefusal(err, c.Status)
	}
	return fmt.Errorf("kind %q is unknown", c.Kind)
}
