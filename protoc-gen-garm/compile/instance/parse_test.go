package instance_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"cel.dev/cel-go/cel"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
)

// differentialRules are every rule text of this package's tests, those that
// compile and those refused at each step (parse, principal names, check,
// result type, cost), and comprehensions of every macro, nested, over the
// request, the answer, a principal attribute and a literal.
var differentialRules = []string{
	`!(request.account_id in principal.attrs.accounts)`,
	`!has(principal.attrs.customer_id) || true`,
	`'A-1' in principal.attrs.accounts && !('A-3' in principal.attrs.accounts)`,
	`'any-customer' in principal.compartments || request.account_id in principal.attrs.accounts && request.items.all(i, i.owner == principal.attrs.customer_id) && request.labels['k'] == 'v'`,
	`'any-customer' in principal.compartments || request.account_id in principal.attrs.accounts`,
	`['A-1', 'A-2'] == principal.attrs.accounts`,
	`dyn(request.account_id) == 'x' && dyn(request.account_id)`,
	`has(principal.tenant)`,
	`has(request.item) && request.item.owner == principal.subject`,
	`int(request.account_id) > 0`,
	`int(request.account_id) > request.amount`,
	`principal.agent != 'bad'`,
	`principal.attrs.accounts == ['A-1', 'A-2']`,
	`principal.attrs.accounts.exists(a, a == 'A-2')`,
	`principal.attrs.accounts.exists(a, a == request.account_id) && principal.attrs.accounts.size() == 2`,
	`principal.attrs.accounts.size() == 2`,
	`principal.attrs.accounts[0] == 'A-1'`,
	`principal.attrs.cap > 0`,
	`principal.attrs.nope.size() > 0`,
	`principal.clearance >= CLEARANCE_CONFIDENTIAL || request.amount < 5`,
	`principal.clearance >= CLEARANCE_CONFIDENTIAL`,
	`principal.clearance >= CLEARANCE_INTERNAL || request.amount < 5`,
	`principal.delegated || !principal.delegated`,
	`principal.role == 'admin'`,
	`principal.tenant == 'acme'`,
	`principal.tenant == request.account_id`,
	`request.account_id == principal.attrs.customer_id`,
	`request.account_id in principal.attrs.accounts || true`,
	`request.account_id in principal.attrs.accounts`,
	`request.account_id in principal.attrs.x`,
	`request.account_id.lowerAscii() == 'x'`,
	`request.amount % request.amount == 1`,
	`request.amount + 1`,
	`request.amount + 9223372036854775807 > 0`,
	`request.amount / request.amount == 1 && request.amount + principal.attrs.cap > 0`,
	`request.amount <= 100000 || !principal.delegated`,
	`request.amount <= principal.attrs.cap || !principal.delegated`,
	`request.amount <`,
	`request.amount == 'x'`,
	`request.free.contains('x')`,
	`request.free.matches('^a+$')`,
	`request.items.all(i, i.owner == principal.attrs.customer_id)`,
	`request.items.all(i, i.owner in principal.attrs.accounts && i.amount < 100)`,
	`request.labels.exists(k, k == principal.attrs.customer_id)`,
	`request.labels['CANARY-secret'] == 'v'`,
	`request.labels[principal.subject] == request.account_id`,
	`request.many.all(i, i.owner in principal.attrs.accounts)`,
	`request.nope == 'x'`,
	`request.tags.all(t, t in principal.attrs.accounts)`,
	`response.owner == principal.attrs.customer_id`,
	`response.rows.all(r, r.owner in principal.attrs.accounts)`,
	`row.owner == principal.attrs.customer_id || principal.clearance >= CLEARANCE_CONFIDENTIAL`,
	`row.owner in principal.attrs.accounts`,
	`true`,
	`principal.attrs.accounts.all(a, a != request.account_id)`,
	`principal.attrs.accounts.all(a, a.startsWith('A-')) && request.items.exists_one(i, i.owner == principal.subject)`,
	`request.items.all(i, principal.attrs.accounts.all(a, a != i.owner))`,
	`request.items.exists(i, request.items.all(j, j.amount <= i.amount))`,
	`request.items.filter(i, i.amount > 0).all(i, i.owner == principal.subject)`,
	`request.items.map(i, i.owner).all(o, o in principal.attrs.accounts)`,
	`request.items.all(i, i.amount > 0) == request.items.exists(i, i.amount > 0)`,
	`['A-1', 'A-2'].all(a, a in principal.attrs.accounts)`,
	`request.labels.all(k, request.labels[k] != principal.subject)`,
	`request.item.owner.size() < 5 && has(request.item.owner)`,
}

// A rule compiles to the same program whether or not another target's rule
// with the same text was parsed first (docs/decisions/0141): its checked
// tree (types, references, source offsets), what it reads, the lists it
// quantifies with all(), its cost, its verdicts, and its refusals are those
// of the text parsed for it alone and checked (Env.CompileAlone, the way
// Compile worked before). The one difference, by design: the alone
// parse's checked tree carries CEL's macro-call records and Compile's does
// not (they are dropped after all() is read from them; nothing in CEL's
// checker, cost estimate or planner reads them), and so neither the source
// offsets of the nodes that only those records held (the checker clears
// the offsets of nodes in neither); both are dropped from the alone tree
// before the trees are compared, and nothing else is.
func TestARuleCompilesTheSameWhetherItsTextWasParsedBeforeOrNot(t *testing.T) {
	t.Parallel()
	targets := map[string]instance.Target{"require": require(t), "reveal": reveal(t), "filter": filter(t)}
	order := slices.Sorted(maps.Keys(targets))
	for _, name := range order {
		for _, expr := range differentialRules {
			t.Run(name+"/"+expr, func(t *testing.T) {
				target := targets[name]
				want, wantErr := newEnv(t).CompileAlone(target, expr)
				cold, coldErr := newEnv(t).Compile(target, expr)
				// Warm: every other target compiled the text first, on the
				// same Env, so this compile checks a copy of their parse.
				env := newEnv(t)
				for _, other := range order {
					if other != name {
						_, _ = env.Compile(targets[other], expr)
					}
				}
				warm, warmErr := env.Compile(target, expr)
				for _, got := range []struct {
					how string
					p   *instance.Program
					err error
				}{{"first parse", cold, coldErr}, {"parsed before", warm, warmErr}} {
					if problem := differs(want, wantErr, got.p, got.err); problem != "" {
						t.Errorf("%s: %s", got.how, problem)
					}
				}
			})
		}
	}
}

// differs says how a compile (got) differs from the alone compile (want),
// or "".
func differs(want *instance.Program, wantErr error, got *instance.Program, gotErr error) string {
	if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
		return fmt.Sprintf("refused with %v, want %v", gotErr, wantErr)
	}
	var wantCost, gotCost *instance.CostError
	if errors.As(wantErr, &wantCost) != errors.As(gotErr, &gotCost) {
		return "a cost refusal in one and not the other"
	}
	if wantErr != nil {
		return ""
	}
	instance.DropMacroCalls(want.Checked())
	for _, got := range []*instance.Program{got} {
		wantTree, err := cel.AstToCheckedExpr(want.Checked())
		if err != nil {
			return err.Error()
		}
		gotTree, err := cel.AstToCheckedExpr(got.Checked())
		if err != nil {
			return err.Error()
		}
		switch {
		case !proto.Equal(wantTree, gotTree):
			return fmt.Sprintf("checked tree\n%v\nwant\n%v", gotTree, wantTree)
		case !maps.Equal(instance.OffsetRanges(want.Checked()), instance.OffsetRanges(got.Checked())):
			return "source offsets differ"
		case !slices.Equal(want.Reads(), got.Reads()):
			return fmt.Sprintf("reads %v, want %v", got.Reads(), want.Reads())
		case !slices.Equal(want.AllOver(), got.AllOver()):
			return fmt.Sprintf("all() over %v, want %v", got.AllOver(), want.AllOver())
		case !slices.Equal(want.Compartments(), got.Compartments()):
			return fmt.Sprintf("compartments %v, want %v", got.Compartments(), want.Compartments())
		case !slices.Equal(want.Tested(), got.Tested()):
			return fmt.Sprintf("tested %v, want %v", got.Tested(), want.Tested())
		case want.CostBound() != got.CostBound():
			return fmt.Sprintf("cost %d, want %d", got.CostBound(), want.CostBound())
		case want.HoldsForEveryCaller(toolv1.Clearance_CLEARANCE_PUBLIC) != got.HoldsForEveryCaller(toolv1.Clearance_CLEARANCE_PUBLIC):
			return "holds for every caller in one and not the other"
		}
	}
	return ""
}

// The verdicts of a rule parsed before are those of the rule parsed alone,
// on requests and answers that make each rule hold, fail and error.
func TestARuleParsedBeforeGivesTheVerdictsOfOneParsedAlone(t *testing.T) {
	t.Parallel()
	req, resp, item := messages(t)
	items := []*dynamicpb.Message{
		message(item, map[string]any{"owner": "A-1", "amount": int64(5)}),
		message(item, map[string]any{"owner": "u-1", "amount": int64(0)}),
	}
	requests := []*dynamicpb.Message{
		message(req, map[string]any{"account_id": "A-1", "amount": int64(3), "items": items, "labels": map[string]string{"k": "v"}}),
		message(req, map[string]any{"account_id": "A-9", "amount": int64(0), "tags": []string{"A-2"}}),
		message(req, nil),
	}
	answers := map[string]*dynamicpb.Message{
		"require": nil,
		"reveal":  message(resp, map[string]any{"owner": "C-1001", "rows": items[:1]}),
		"filter":  items[0],
	}
	targets := map[string]instance.Target{"require": require(t), "reveal": reveal(t), "filter": filter(t)}
	view := newEnv(t).NewView(customer())
	for name, target := range targets {
		env := newEnv(t)
		for _, expr := range differentialRules {
			alone, err := newEnv(t).CompileAlone(target, expr)
			if err != nil {
				continue
			}
			for other := range targets {
				_, _ = env.Compile(targets[other], expr)
			}
			parsed := compile(t, env, target, expr)
			for i, r := range requests {
				wantHolds, wantClass := alone.Eval(view, r, answers[name])
				holds, class := parsed.Eval(view, r, answers[name])
				if holds != wantHolds || class != wantClass {
					t.Errorf("%s %s, request %d: holds=%v class=%v, want %v %v", name, expr, i, holds, class, wantHolds, wantClass)
				}
			}
		}
	}
}

// Targets compiling one text at once each check their own copy of its one
// parse; run under -race, which sees two checkers rewriting one tree.
func TestOneTextCompiledForManyTargetsAtOnceChecksACopyEach(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	const expr = `principal.attrs.accounts.all(a, a != request.account_id) && principal.tenant == request.account_id`
	want, err := newEnv(t).CompileAlone(require(t), expr)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, target := range []instance.Target{require(t), reveal(t), filter(t), require(t), reveal(t), filter(t)} {
		wg.Go(func() {
			p, err := env.Compile(target, expr)
			if err != nil {
				t.Error(err)
				return
			}
			if !slices.Equal(p.AllOver(), want.AllOver()) || !slices.Equal(p.Reads(), want.Reads()) {
				t.Errorf("all() over %v reads %v, want %v %v", p.AllOver(), p.Reads(), want.AllOver(), want.Reads())
			}
		})
	}
	wg.Wait()
	if n := env.Parsed(); n != 1 {
		t.Fatalf("the Env keeps %d parses of one text, want 1", n)
	}
	env.ForgetParses()
	if n := env.Parsed(); n != 0 {
		t.Fatalf("the Env keeps %d parses after forgetting them", n)
	}
}
