package instance_test

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
)

// fuzzRules are the rules the fuzzer runs on fuzzed requests and principals:
// every class of failure is reachable from them.
var fuzzRules = []string{
	`'any-customer' in principal.compartments || request.account_id in principal.attrs.accounts`,
	`request.account_id == principal.attrs.customer_id`,
	`request.amount <= principal.attrs.cap || !principal.delegated`,
	`request.amount / request.amount == 1 && request.amount + principal.attrs.cap > 0`,
	`request.labels[principal.subject] == request.account_id`,
	`int(request.account_id) > request.amount`,
	`request.items.all(i, i.owner in principal.attrs.accounts && i.amount < 100)`,
	`principal.tenant == request.account_id`,
}

func FuzzRuleEvaluationNeverPanicsAndClassesAreClosed(f *testing.F) {
	f.Add("A-1", int64(5), "u-1", "A-1", int64(10), true, "k", "v")
	f.Add("", int64(0), "", "", int64(0), false, "", "")
	f.Add("9223372036854775807", int64(-9223372036854775808), "k", "CANARY", int64(9223372036854775807), true, "k", "CANARY")
	env := newEnv(f)
	req, _, item := messages(f)
	programs := make([]*instance.Program, len(fuzzRules))
	for i, r := range fuzzRules {
		programs[i] = compile(f, env, require(f), r)
	}
	closed := append(instance.Classes(), instance.ClassNone)
	f.Fuzz(func(t *testing.T, account string, amount int64, subject, held string, cap int64, delegated bool, key, value string) {
		attrs := map[string]any{"accounts": []string{held}, "cap": cap}
		if held != "" {
			attrs["customer_id"] = held
		}
		view := env.NewView(instance.Principal{Subject: subject, Tenant: held, Delegated: delegated, Attrs: attrs})
		request := message(req, map[string]any{
			"account_id": account, "amount": amount,
			"labels": map[string]string{key: value},
			"items":  []*dynamicpb.Message{message(item, map[string]any{"owner": value, "amount": amount})},
		})
		for _, p := range programs {
			holds, class := p.Eval(view, request, nil)
			if !slices.Contains(closed, class) {
				t.Fatalf("class %d is not in the closed list", class)
			}
			if holds && class != instance.ClassNone {
				t.Fatalf("a rule held with class %v", class)
			}
		}
	})
}
