package grant_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/chain/grant"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/keyset/keysettest"
	"github.com/garm-dev/garm/daemon/internal/replay"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
)

func TestTheRightGrantIsAcceptedOnceAndItsReplayIsRefused(t *testing.T) {
	f := newFixture(t)
	g := f.sign(t, f.claims())
	res := f.accept(t, g)
	if res.JTI != "grant-1" || res.TaskID != "TASK-42" {
		t.Errorf("result %+v, want jti grant-1 and task TASK-42", res)
	}
	if spent := f.spent.Spends(); len(spent) != 1 || spent[0] != replay.Key(issuer, "grant-1") {
		t.Errorf("spent %q, want only the key of (issuer, grant-1)", spent)
	}

	res, err := f.check(t, g)
	d := wantDenied(t, err, deny.PermissionDenied)
	if !strings.Contains(d.Detail, "already spent") || !strings.Contains(d.Detail, "grant-1") {
		t.Errorf("the replay's detail %q does not say grant-1 was already spent", d.Detail)
	}
	if res.JTI != "" || res.TaskID != "TASK-42" {
		t.Errorf("the replay's result %+v, want no jti and task TASK-42", res)
	}
}

func TestTheMaterialIsTheSpecsReferenceDigestOfTheRequest(t *testing.T) {
	f := newFixture(t)
	got, err := wire.RequestMaterialDigest(f.payment, f.pay.Policy.GetApproval().GetMaterialFields())
	if err != nil || got != referenceDigest {
		t.Fatalf("the payment's material digest is %q (%v), want design 7.9's %s", got, err, referenceDigest)
	}
}

func TestAGrantForOtherValuesIsNotSpentAndStillServesItsOwnCall(t *testing.T) {
	f := newFixture(t)
	g := f.sign(t, f.claims())
	for name, json := range map[string]string{
		"another amount":          `{"amountMinorUnits": "125001", "beneficiaryIban": "GB29NWBK60161331926819", "currencyCode": "GBP"}`,
		"another beneficiary":     `{"amountMinorUnits": "125000", "beneficiaryIban": "GB82WEST12345698765432", "currencyCode": "GBP"}`,
		"a material field absent": `{"amountMinorUnits": "125000", "beneficiaryIban": "GB29NWBK60161331926819"}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := f.checkCall(t, g, f.pay, cataloguetest.Message(t, f.pay.Input, json))
			wantDenied(t, err, deny.PermissionDenied)
		})
	}
	// A field that is not material may change freely.
	other := cataloguetest.Message(t, f.pay.Input, strings.Replace(paymentJSON, "invoice 7", "invoice 8", 1))
	if _, err := f.checkCall(t, g, f.pay, other); err != nil {
		t.Fatalf("the approved values with another reference were refused: %v", err)
	}
}

func TestARequestWhoseMaterialCannotBeComputedIsRefused(t *testing.T) {
	f := newFixture(t)
	unset := cataloguetest.Message(t, f.pay.Input, `{"amountMinorUnits": "125000", "beneficiaryIban": "<unset>", "currencyCode": "GBP"}`)
	g := f.sign(t, set(f.claims(), "garm_grant.material", material("125000", "<unset>", "GBP")))
	_, err := f.checkCall(t, g, f.pay, unset)
	d := wantDenied(t, err, deny.PermissionDenied)
	if !strings.Contains(d.Detail, "cannot be computed") {
		t.Errorf("detail %q does not say the digest cannot be computed", d.Detail)
	}
	if _, err := f.checkCall(t, g, f.pay, nil); err == nil {
		t.Error("a call with no request message was accepted")
	}
	if len(f.spent.Spends()) != 0 {
		t.Error("a grant whose material could not be checked was spent")
	}
}

func TestASpenderThatCannotWriteRefusesTheGrantWithoutBurningIt(t *testing.T) {
	f := newFixture(t)
	g := f.sign(t, f.claims())
	f.spent.Fail(errors.New("nats: timeout"))
	_, err := f.check(t, g)
	d := wantDenied(t, err, deny.PermissionDenied)
	if !strings.Contains(d.Detail, "could not be written") {
		t.Errorf("detail %q does not say the bucket could not be written", d.Detail)
	}
	if spent := f.spent.Spends(); len(spent) != 0 {
		t.Errorf("a spend that failed recorded %q", spent)
	}
	f.spent.Fail(nil)
	if res := f.accept(t, g); res.JTI != "grant-1" {
		t.Errorf("result %+v after the bucket recovered", res)
	}
}

func TestAnAbsentGrantIsGrantRequiredSayingWhatAGrantMustBind(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		tool  string
		extra map[string]any
		body  string
	}{
		{"initiate_payment", map[string]any{
			"tool":                  initiatePayment,
			"material_fields":       []string{"amount_minor_units", "beneficiary_iban", "currency_code"},
			"max_grant_age_seconds": uint32(300),
			"distinct_approver":     false,
		}, `{"code":"grant_required","distinct_approver":false,"material_fields":["amount_minor_units","beneficiary_iban","currency_code"],"max_grant_age_seconds":300,"message":"This call needs a human's approval grant.","tool":"grantfix.v1.initiate_payment"}`},
		{"cancel_payment", map[string]any{
			"tool":                  cancelPayment,
			"material_fields":       []string{},
			"max_grant_age_seconds": uint32(60),
			"distinct_approver":     false,
		}, `{"code":"grant_required","distinct_approver":false,"material_fields":[],"max_grant_age_seconds":60,"message":"This call needs a human's approval grant.","tool":"grantfix.v1.cancel_payment"}`},
	} {
		t.Run(c.tool, func(t *testing.T) {
			tl := tool(t, c.tool)
			res, err := f.checkCall(t, "", tl, cataloguetest.Message(t, tl.Input, `{}`))
			d := wantDenied(t, err, deny.GrantRequired)
			if !reflect.DeepEqual(d.Extra, c.extra) {
				t.Errorf("extra %#v, want %#v", d.Extra, c.extra)
			}
			if fields := d.Extra["material_fields"].([]string); fields == nil {
				t.Error("material_fields is nil: it would be null on the wire")
			}
			status, body := deny.Wire(err)
			if status != 403 || string(body) != c.body {
				t.Errorf("wire %d %s, want 403 %s", status, body, c.body)
			}
			if res != (grant.Result{}) {
				t.Errorf("result %+v for no grant", res)
			}
		})
	}
	// The refusal holds a copy: changing it changes no tool.
	_, err := f.check(t, "")
	wantDenied(t, err, deny.GrantRequired).Extra["material_fields"].([]string)[0] = "changed"
	if f.pay.Policy.GetApproval().GetMaterialFields()[0] != "amount_minor_units" {
		t.Error("changing a refusal's material_fields changed the tool")
	}
}

func TestTheTaskIsRecordedWhetherOrNotTheGrantVerified(t *testing.T) {
	f := newFixture(t)
	forged := keysettest.NewKey(t, "ES256", f.key.Kid).Sign(t, encode(t, f.claims()))
	badClaims := f.sign(t, set(f.claims(), "garm_grant.subject", "user:eve"))
	h := f.key.Header()
	h["alg"] = "none"
	unsigned := keysettest.Unsigned(t, h, encode(t, f.claims()))
	for name, g := range map[string]string{"bad signature": forged, "refused claim": badClaims, "alg none": unsigned} {
		t.Run(name, func(t *testing.T) {
			res, err := f.check(t, g)
			wantDenied(t, err, deny.PermissionDenied)
			if res.TaskID != "TASK-42" {
				t.Errorf("task %q, want TASK-42", res.TaskID)
			}
		})
	}

	// 201 bytes, so that byte 128 falls inside a character.
	long := "a" + strings.Repeat("é", 100)
	for name, c := range map[string]struct {
		task any
		want string
	}{
		"clipped before a character": {long, "a" + strings.Repeat("é", 63)},
		"not a string":               {42, ""},
		"null":                       {nil, ""},
	} {
		t.Run(name, func(t *testing.T) {
			g := keysettest.NewKey(t, "ES256", f.key.Kid).Sign(t, encode(t, set(f.claims(), "garm_grant.task", c.task)))
			res, _ := f.check(t, g)
			if res.TaskID != c.want || !utf8.ValidString(res.TaskID) {
				t.Errorf("task %q, want %q", res.TaskID, c.want)
			}
		})
	}
	res, _ := f.check(t, "not-a-grant")
	if res.TaskID != "" {
		t.Errorf("task %q from a grant with no payload", res.TaskID)
	}
}

func TestSkewIsAllowedOnExpAndIat(t *testing.T) {
	f := newFixture(t)
	now := f.clock.Now().Unix()
	for name, c := range map[string]map[string]any{
		"expired within the skew":        set(set(f.claims(), "exp", now-59), "jti", "a"),
		"issued within the skew ahead":   set(set(f.claims(), "iat", now+59), "jti", "b"),
		"exactly the tool's ceiling old": set(set(f.claims(), "iat", now-300), "jti", "c"),
		"not before, within the skew":    set(set(f.claims(), "nbf", now+59), "jti", "d"),
		"an audience array holding ours": set(set(f.claims(), "aud", []any{"other", audience}), "jti", "e"),
		"unknown garm_grant members":     set(set(f.claims(), "garm_grant.notes", map[string]any{"x": 1}), "jti", "f"),
		"more approver compartments":     set(set(f.claims(), "garm_grant.approver_compartments", []any{"hr", "payments-ops", "treasury"}), "jti", "g"),
		"a prefixed lowercase clearance": set(set(f.claims(), "garm_grant.approver_clearance", "clearance_restricted"), "jti", "h"),
		"a mixed-case bare clearance":    set(set(f.claims(), "garm_grant.approver_clearance", "Confidential"), "jti", "i"),
		"a fractional iat":               set(set(f.claims(), "iat", float64(now)-0.5), "jti", "j"),
	} {
		t.Run(name, func(t *testing.T) { f.accept(t, f.sign(t, c)) })
	}
}

func TestAToolWithoutAnApproverMinClearanceRefusesEveryGrant(t *testing.T) {
	f := newFixture(t)
	hold := tool(t, "hold_payment")
	for _, clearance := range []string{"PUBLIC", "RESTRICTED"} {
		c := set(set(f.claims(), "garm_grant.tool", holdPayment), "garm_grant.approver_clearance", clearance)
		_, err := f.checkCall(t, f.sign(t, c), hold, cataloguetest.Message(t, hold.Input, `{}`))
		if d := wantDenied(t, err, deny.PermissionDenied); !strings.Contains(d.Detail, "approver_min_clearance") {
			t.Errorf("detail %q does not name approver_min_clearance", d.Detail)
		}
	}
	if len(f.spent.Spends()) != 0 {
		t.Error("a refused grant was spent")
	}
}

func TestAToolWithoutAMaxGrantAgeRefusesEveryGrant(t *testing.T) {
	f := newFixture(t)
	ageless := withApproval(f.pay, func(a *toolv1.ToolPolicy_Approval) { a.MaxGrantAgeSeconds = 0 })
	c := set(f.claims(), "iat", f.clock.Now().Unix())
	_, err := f.checkCall(t, f.sign(t, c), ageless, f.payment)
	if d := wantDenied(t, err, deny.PermissionDenied); !strings.Contains(d.Detail, "max_grant_age_seconds") {
		t.Errorf("detail %q does not name max_grant_age_seconds", d.Detail)
	}
}

func TestAToolThatNeedsNoGrantIsNotStepFivesToJudge(t *testing.T) {
	f := newFixture(t)
	for _, mode := range []toolv1.ToolPolicy_Approval_Mode{toolv1.ToolPolicy_Approval_MODE_NONE, toolv1.ToolPolicy_Approval_MODE_NOTIFY} {
		free := withApproval(f.pay, func(a *toolv1.ToolPolicy_Approval) { a.Mode = mode })
		_, err := f.checkCall(t, f.sign(t, f.claims()), free, f.payment)
		var failed *deny.Failed
		if !errors.As(err, &failed) || failed.Code != deny.Internal {
			t.Errorf("%s: %v, want an internal failure", mode, err)
		}
	}
	if len(f.spent.Spends()) != 0 {
		t.Error("a grant was spent for a tool that needs none")
	}
}

func TestCheckSpendsNothingAndSpendSpendsOnce(t *testing.T) {
	f := newFixture(t)
	g := f.sign(t, f.claims())
	ctx := t.Context()
	res, err := f.v.Check(ctx, g, f.who, f.pay, f.payment)
	if err != nil || res.JTI != "grant-1" {
		t.Fatalf("check: %+v %v", res, err)
	}
	// Checked as often as a caller likes, the grant stays unspent.
	if _, err := f.v.Check(ctx, g, f.who, f.pay, f.payment); err != nil {
		t.Fatalf("a second check: %v", err)
	}
	if spent := f.spent.Spends(); len(spent) != 0 {
		t.Fatalf("Check spent %q", spent)
	}
	if err := f.v.Spend(ctx, res, "call-1"); err != nil {
		t.Fatalf("spend: %v", err)
	}
	d := wantDenied(t, f.v.Spend(ctx, res, "call-2"), deny.PermissionDenied)
	if !strings.Contains(d.Detail, "already spent") {
		t.Errorf("the second spend's detail %q", d.Detail)
	}
	// A result that did not verify cannot be spent.
	if err := f.v.Spend(ctx, grant.Result{TaskID: "T"}, "call-1"); err == nil {
		t.Error("an unverified result was spent")
	}
}

func TestAGrantIsSpentOnceByConcurrentCalls(t *testing.T) {
	f := newFixture(t)
	g := f.sign(t, f.claims())
	var ok, refused atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			res, err := f.check(t, g)
			switch {
			case err == nil && res.JTI == "grant-1":
				ok.Add(1)
			case err != nil:
				var d *deny.Denied
				if errors.As(err, &d) && d.Code == deny.PermissionDenied && strings.Contains(d.Detail, "already spent") {
					refused.Add(1)
					return
				}
				t.Errorf("refused with %v, want already spent", err)
			default:
				t.Errorf("accepted with result %+v", res)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || refused.Load() != 49 {
		t.Errorf("%d calls succeeded and %d were refused as spent, want 1 and 49", ok.Load(), refused.Load())
	}
}

func TestTheClockDecidesFreshness(t *testing.T) {
	f := newFixture(t)
	g := f.sign(t, f.claims()) // issued 10 s ago, for 300 s
	f.clock.Advance(291 * time.Second)
	d := wantDenied(t, errOf(f.check(t, g)), deny.PermissionDenied)
	if !strings.Contains(d.Detail, "300 seconds") {
		t.Errorf("detail %q does not say the grant is older than the tool allows", d.Detail)
	}
}

func errOf[T any](_ T, err error) error { return err }

// TestTheRefusalBodyNeverCarriesTheDetail pins design 7.3: the wire sees the
// static sentence, the ledger the detail.
func TestTheRefusalBodyNeverCarriesTheDetail(t *testing.T) {
	f := newFixture(t)
	_, err := f.check(t, f.sign(t, set(f.claims(), "garm_grant.subject", "user:eve")))
	status, body := deny.Wire(err)
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"code": "permission_denied", "message": deny.PermissionDenied.Message()}
	if status != 403 || !reflect.DeepEqual(got, want) {
		t.Errorf("wire %d %v, want 403 %v", status, got, want)
	}
}
