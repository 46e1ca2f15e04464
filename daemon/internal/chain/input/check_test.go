package input_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/input"
	"github.com/garm-dev/garm/daemon/internal/deny"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"google.golang.org/protobuf/proto"
)

type refusal struct {
	name    string
	caller  *call.Principal
	request string
	detail  string
}

func refusals(t *testing.T) []refusal {
	notWritable := func(path string) string { return path + " is not writable by this caller" }
	return []refusal{
		{"a top-level field", principal(t, "", internal), `{"note": "n"}`, notWritable("note")},
		{"a field in the second element of a list", principal(t, "", internal),
			`{"contacts": [{"name": "a"}, {"name": "b", "email": "b@mail.example"}]}`, notWritable("contacts.email")},
		{"a field in one value of a map", principal(t, "", internal),
			`{"holdings": {"x": {"reference": "r"}, "y": {"amount": "5"}}}`, notWritable("holdings.amount")},
		{"a field whose compartment the caller lacks", principal(t, "", confidential),
			`{"contacts": [{"email": "a@mail.example"}]}`, notWritable("contacts.email")},
		{"a map value's field needing another compartment", principal(t, "", confidential, "pii"),
			`{"holdings": {"x": {"amount": "5"}}}`, notWritable("holdings.amount")},
		{"an empty message", principal(t, "", confidential), `{"billing": {}}`, notWritable("billing")},
		{"a message whose own children are writable", principal(t, "", confidential, "financial", "pii"),
			`{"billing": {"iban": "DE89"}}`, notWritable("billing")},
		{"a list of scalars", principal(t, "", internal), `{"tags": ["a"]}`, notWritable("tags")},
		{"a map of scalars", principal(t, "", internal), `{"labels": {"k": "v"}}`, notWritable("labels")},
		{"a oneof member", principal(t, "", confidential), `{"phone": "+44 20 7946 0000"}`, notWritable("phone")},
		{"anything from an unspecified clearance", principal(t, "", unspecified), `{"accountId": "a"}`, notWritable("account_id")},
		{"the runner's field without an exec claim", principal(t, "", restricted, "financial", "pii"),
			`{"idempotencyKey": "k"}`, "idempotency_key is supplied by the runner and the caller carries no exec claim"},
		{"the runner's field from a runner who may not write it", principal(t, "runner:ci-7", unspecified),
			`{"idempotencyKey": "k"}`, notWritable("idempotency_key")},
	}
}

func TestAFieldTheCallerMayNotWriteIsRefusedNotStripped(t *testing.T) {
	update := tool(t, "update_account")
	for _, tc := range refusals(t) {
		t.Run(tc.name, func(t *testing.T) {
			req := request(t, update, tc.request)
			before := proto.Clone(req.Interface())
			key, err := input.NewChecker(16).CheckWrites(tc.caller, update, req)
			var denied *deny.Denied
			if !errors.As(err, &denied) {
				t.Fatalf("got key %q and error %v, want a refusal", key, err)
			}
			if denied.Code != deny.PermissionDenied || denied.Detail != tc.detail {
				t.Errorf("refused %s %q, want permission_denied %q", denied.Code, denied.Detail, tc.detail)
			}
			if !proto.Equal(before, req.Interface()) {
				t.Errorf("the request changed: %v, was %v", req, before)
			}
		})
	}
}

func TestFieldsTheCallerMayWriteOrDidNotSetPass(t *testing.T) {
	update := tool(t, "update_account")
	cases := []struct {
		name    string
		caller  *call.Principal
		request string
		key     string
	}{
		{"an empty request", principal(t, "", internal), `{}`, ""},
		{"unwritable fields left unset, beside their writable siblings", principal(t, "", internal),
			`{"accountId": "a", "contacts": [{"name": "a"}, {}], "holdings": {"x": {"reference": "r"}, "y": {}}, "postalAddress": "p"}`, ""},
		{"an empty list and an empty map are not set", principal(t, "", internal), `{"tags": [], "labels": {}}`, ""},
		{"every field by a caller who may write them all", principal(t, "", restricted, "financial", "pii"),
			`{"accountId": "a", "note": "n", "contacts": [{"name": "a", "email": "a@mail.example"}],
			  "holdings": {"x": {"amount": "5", "reference": "r"}}, "billing": {"iban": "DE89"},
			  "tags": ["t"], "labels": {"k": "v"}, "phone": "+44 20 7946 0000"}`, ""},
		{"the runner's key from a runner", principal(t, "runner:ci-7", internal),
			`{"accountId": "a", "idempotencyKey": "run-42-step-3"}`, "run-42-step-3"},
		{"no key from a runner that sent none", principal(t, "runner:ci-7", internal), `{"accountId": "a"}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, err := input.NewChecker(16).CheckWrites(tc.caller, update, request(t, update, tc.request))
			if err != nil || key != tc.key {
				t.Fatalf("got key %q and error %v, want key %q", key, err, tc.key)
			}
		})
	}
}

// withRule is t with a copy of its input plan in which the rule at path is
// changed by change.
func withRule(tb testing.TB, t *call.Tool, path string, change func(*planv1.FieldRule)) *call.Tool {
	tb.Helper()
	plan := proto.Clone(t.InputPlan).(*planv1.MessagePlan)
	i := slices.IndexFunc(plan.GetRules(), func(r *planv1.FieldRule) bool { return r.GetPath() == path })
	if i < 0 {
		tb.Fatalf("no rule %q", path)
	}
	change(plan.GetRules()[i])
	changed := *t
	changed.InputPlan = plan
	return &changed
}

func runnerSourced(r *planv1.FieldRule) { r.RunnerSourced = true }

func TestAPlanThatDoesNotFitTheRequestFailsTheCallAsOurs(t *testing.T) {
	update := tool(t, "update_account")
	runner := principal(t, "runner:ci-7", restricted, "financial", "pii")
	numbers := func(n ...int32) func(*planv1.FieldRule) { return func(r *planv1.FieldRule) { r.Numbers = n } }
	cases := []struct {
		name    string
		tool    *call.Tool
		caller  *call.Principal
		request string
	}{
		{"two runner-sourced fields set", withRule(t, update, "account_id", runnerSourced), runner,
			`{"accountId": "a", "idempotencyKey": "k"}`},
		{"a runner-sourced list", withRule(t, update, "tags", runnerSourced), runner, `{"tags": ["a"]}`},
		{"a runner-sourced integer", withRule(t, update, "holdings.amount", runnerSourced), runner,
			`{"holdings": {"x": {"amount": "5"}}}`},
		{"a runner-sourced field below the top", withRule(t, update, "contacts.name", runnerSourced), runner,
			`{"contacts": [{"name": "a"}]}`},
		{"a number the message lacks, set or not", withRule(t, update, "note", numbers(60)), principal(t, "", internal), `{}`},
		{"a nested number the element lacks", withRule(t, update, "contacts.email", numbers(3, 20)), principal(t, "", internal),
			`{"contacts": [{"name": "a"}]}`},
		{"a path going on through a string", withRule(t, update, "contacts.email", numbers(1, 2)), principal(t, "", internal), `{}`},
		{"a path with no numbers", withRule(t, update, "note", numbers()), principal(t, "", internal), `{}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, err := input.NewChecker(16).CheckWrites(tc.caller, tc.tool, request(t, tc.tool, tc.request))
			if err == nil {
				t.Fatalf("passed with key %q", key)
			}
			if denied := (*deny.Denied)(nil); errors.As(err, &denied) {
				t.Fatalf("refused as the caller's fault: %v", err)
			}
			for _, value := range []string{`"a"`, `"k"`, `"5"`} {
				if strings.Contains(err.Error(), value) {
					t.Errorf("the error %q may carry a value", err)
				}
			}
		})
	}
}

func TestARequestThePlanDoesNotDescribeFailsTheCall(t *testing.T) {
	update := tool(t, "update_account")
	c := input.NewChecker(16)
	other := *update
	other.Input = update.Output
	if _, err := c.CheckWrites(principal(t, "", internal), update, request(t, &other, `{}`)); err == nil {
		t.Error("an UpdateAccountResponse was checked with the request's plan")
	}
	planless := *update
	planless.InputPlan = nil
	if _, err := c.CheckWrites(principal(t, "", internal), &planless, request(t, update, `{}`)); err == nil {
		t.Error("a tool without an input plan was checked")
	}
	if _, err := c.CheckWrites(principal(t, "", internal), update, nil); err == nil {
		t.Error("a nil request was checked")
	}
}

func TestCompartmentBitsThatDoNotMatchTheirRuleMakeTheFieldUnwritable(t *testing.T) {
	update := tool(t, "update_account")
	broken := *update
	broken.InputRuleCompartments = nil
	caller := principal(t, "", restricted, "financial", "pii")
	_, err := input.NewChecker(16).CheckWrites(caller, &broken, request(t, &broken, `{"phone": "+44 20 7946 0000"}`))
	if denied := (*deny.Denied)(nil); !errors.As(err, &denied) {
		t.Fatalf("phone was writable without its compartment bits: %v", err)
	}
}

func TestCheckingManyCallersAtOnceAgreesWithCheckingEachAlone(t *testing.T) {
	update := tool(t, "update_account")
	cases := refusals(t)
	shared := input.NewChecker(3) // smaller than the shapes used, so entries are evicted while read
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				tc := cases[(g+i)%len(cases)]
				_, err := shared.CheckWrites(tc.caller, update, request(t, update, tc.request))
				if denied := (*deny.Denied)(nil); !errors.As(err, &denied) || denied.Detail != tc.detail {
					errs <- fmt.Errorf("%s: %v under contention", tc.name, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
