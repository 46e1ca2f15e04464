//go:build conformance

package minter_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/garm-dev/garm/daemon/conformance/minter"
	"github.com/garm-dev/garm/devkit/idp"
)

// These tests prove that the kit judges: a minter that is wrong in one way
// fails exactly the cases that say so.

// failedKinds counts the failed cases of each kind, and the cases.
func failedKinds(rep minter.Report) (failed map[string]int, all map[string]int) {
	failed, all = map[string]int{}, map[string]int{}
	for _, r := range rep.Results {
		all[r.Kind]++
		if r.Err != nil {
			failed[r.Kind]++
		}
	}
	return failed, all
}

func TestAMinterWhoseTokensNameAnotherAudienceFailsEveryTokenCase(t *testing.T) {
	t.Parallel()
	_, srv := startDevIdP(t, "devidp-personas.yaml", idp.Options{Audience: "not-garm", GrantAudience: "garm"})
	rep := run(t, minter.Config{Suite: loadSuite(t, "devidp.yaml"), Endpoint: srv.URL(), Driver: &minter.GetDriver{Endpoint: srv.URL()}})
	failed, all := failedKinds(rep)
	if failed[minter.KindToken] != all[minter.KindToken] || rep.Failed() != all[minter.KindToken] {
		t.Fatalf("failed %v of %v: want every token case and nothing else", failed, all)
	}
}

func TestAMinterWhoseGrantsNameAnotherIssuerFailsEveryGrantCase(t *testing.T) {
	t.Parallel()
	_, srv := startDevIdP(t, "devidp-personas.yaml", idp.Options{})
	suite := loadSuite(t, "devidp.yaml")
	other := *suite.Grant
	other.Issuer = "https://another-idp.invalid"
	suite.Grant = &other
	rep := run(t, minter.Config{Suite: suite, Endpoint: srv.URL(), Driver: &minter.GetDriver{Endpoint: srv.URL()}})
	failed, all := failedKinds(rep)
	if failed[minter.KindGrant] != all[minter.KindGrant] || rep.Failed() != all[minter.KindGrant] {
		t.Fatalf("failed %v of %v: want every grant case and nothing else", failed, all)
	}
}

func TestAGrantForOtherMaterialThanTheCallsFails(t *testing.T) {
	t.Parallel()
	_, srv := startDevIdP(t, "devidp-personas.yaml", idp.Options{})
	suite := loadSuite(t, "devidp.yaml")
	var kept []minter.Case
	for _, c := range suite.Cases {
		if c.Kind == minter.KindGrant && c.For.Material != nil {
			f := *c.For
			f.Material = map[string]string{}
			for k, v := range c.For.Material {
				f.Material[k] = v + "0"
			}
			c.For = &f
			kept = append(kept, c)
		}
	}
	suite.Cases = kept
	rep := run(t, minter.Config{Suite: suite, Endpoint: srv.URL(), Driver: &minter.GetDriver{Endpoint: srv.URL()}})
	if len(kept) == 0 || rep.Failed() != len(kept) {
		t.Fatalf("%d of %d grant cases for other material failed, want all", rep.Failed(), len(kept))
	}
}

func TestAMinterThatIsDownFailsEveryCaseItsRefusalsIncluded(t *testing.T) {
	t.Parallel()
	_, srv := startDevIdP(t, "devidp-personas.yaml", idp.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	_ = ln.Close()
	rep := run(t, minter.Config{
		Suite: loadSuite(t, "devidp.yaml"), Endpoint: srv.URL(), Driver: &minter.GetDriver{Endpoint: down},
	})
	if rep.Passed() != 0 {
		t.Fatalf("%d cases passed against a minter that is down", rep.Passed())
	}
}

func TestAMinterThatMintsWhatItMustRefuseFailsTheRefusals(t *testing.T) {
	t.Parallel()
	id, srv := startDevIdP(t, "devidp-personas.yaml", idp.Options{})
	// A minter that answers everything with a token garmd would accept.
	token, err := id.Token("support", "")
	if err != nil {
		t.Fatal(err)
	}
	lenient := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(token)) }))
	t.Cleanup(lenient.Close)
	rep := run(t, minter.Config{
		Suite: loadSuite(t, "devidp.yaml"), Endpoint: srv.URL(), Driver: &minter.GetDriver{Endpoint: lenient.URL},
	})
	failed, all := failedKinds(rep)
	for _, kind := range []string{minter.KindTokenRefused, minter.KindGrantRefused} {
		if failed[kind] != all[kind] {
			t.Errorf("%d of %d %s cases failed, want all", failed[kind], all[kind], kind)
		}
	}
}

func TestAnSTSThatIgnoresClientAuthenticationFailsExactlyTheClientAuthenticationCases(t *testing.T) {
	t.Parallel()
	d, idpSrv := startFixtureSTS(t, true)
	suite := loadSuite(t, "sts.yaml")
	rep := run(t, minter.Config{Suite: suite, Endpoint: d.Endpoint, Driver: d, Vars: map[string]string{"jwks": idpSrv.JWKSURL()}})
	for i, r := range rep.Results {
		spoilt := suite.Cases[i].ClientAuth != ""
		if (r.Err != nil) != spoilt {
			t.Errorf("%q: failed=%v, want failed=%v", r.Name, r.Err != nil, spoilt)
		}
	}
}

func TestAnApprovalsGrantForAnotherDelegationChainFails(t *testing.T) {
	t.Parallel()
	d := startApprovals(t)
	suite := loadSuite(t, "approvals.yaml")
	c := suite.Cases[0]
	if c.Kind != minter.KindGrant || len(c.For.Act) != 0 {
		t.Fatalf("the suite's first case is not a grant without act: %+v", c)
	}
	// The request recorded is the case's; the call the grant is judged
	// for comes through an agent. The service binds the chain it was asked
	// about, so garmd must refuse the grant.
	delegated := *c.For
	delegated.Act = []string{"agent:treasury-assistant"}
	recorded := c.For
	c.For = &delegated
	rep := run(t, minter.Config{
		Suite:    &minter.Suite{Name: "another-chain", Version: 1, Shape: minter.ShapeApprovals, Grant: suite.Grant, Cases: []minter.Case{c}},
		Endpoint: d.base, Driver: &recordingDriver{approvalsDriver: d, recorded: recorded},
	})
	if rep.Failed() != 1 {
		t.Fatal("a grant bound to no delegation chain verified for a delegated call")
	}
}

// recordingDriver records the request recorded rather than the case's.
type recordingDriver struct {
	*approvalsDriver
	recorded *minter.GrantFor
}

func (d *recordingDriver) MintGrant(ctx context.Context, c *minter.Case) (string, error) {
	cp := *c
	cp.For = d.recorded
	return d.approvalsDriver.MintGrant(ctx, &cp)
}
