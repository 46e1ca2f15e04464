package input_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"buf.build/go/protovalidate"
	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/input"
	"github.com/garm-dev/garm/daemon/internal/deny"
)

// validator compiles t's input rules as the catalogue does for a
// generation: eagerly, CEL included.
func validator(tb testing.TB, t *call.Tool) protovalidate.Validator {
	tb.Helper()
	v, err := protovalidate.New(protovalidate.WithMessageDescriptors(t.Input), protovalidate.WithDisableLazy())
	if err != nil {
		tb.Fatalf("compiling %s's rules: %v", t.FQN, err)
	}
	return v
}

var (
	low  = call.Shape{Clearance: internal}
	high = call.Shape{Clearance: confidential}
)

// refused is Validate's refusal of the request, failing the test on
// anything else.
func refused(tb testing.TB, shape call.Shape, json string) *deny.Denied {
	tb.Helper()
	order := tool(tb, "place_order")
	err := input.NewChecker(16).Validate(validator(tb, order), order, shape, request(tb, order, json))
	var denied *deny.Denied
	if !errors.As(err, &denied) {
		tb.Fatalf("%s: got %v, want a refusal", json, err)
	}
	if denied.Code != deny.InvalidArgument {
		tb.Fatalf("%s: refused %s, want invalid_argument", json, denied.Code)
	}
	return denied
}

func listedOf(tb testing.TB, d *deny.Denied) []input.Violation {
	tb.Helper()
	listed, ok := d.Extra["violations"].([]input.Violation)
	if !ok || listed == nil {
		tb.Fatalf("violations are %#v, want a non-nil []input.Violation", d.Extra["violations"])
	}
	return listed
}

func TestViolationsAreListedOnlyAsFarAsTheCallerWasShownTheInput(t *testing.T) {
	type v = input.Violation
	cases := []struct {
		name    string
		shape   call.Shape
		request string
		want    []v
	}{
		{"a standard rule, with its field, rule id and message", low, `{"name": "ab", "cardToken": "t-1"}`,
			[]v{{"name", "string.min_len", "must be at least 3 characters"}}},
		{"a field the caller may write", high, `{"secretCode": "toolong", "cardToken": "t-1"}`,
			[]v{{"secret_code", "string.max_len", "must be at most 4 characters"}}},
		{"a field the caller may not write", low, `{"secretCode": "toolong", "cardToken": "t-1"}`, []v{}},
		{"a field in a list element", low, `{"items": [{"name": "pen"}, {"name": ""}], "cardToken": "t-1"}`,
			[]v{{"items[1].name", "string.min_len", "must be at least 1 characters"}}},
		{"a rule on the list itself", low, `{"items": [{}, {}, {}, {}], "cardToken": "t-1"}`,
			[]v{{"items", "repeated.max_items", "must contain no more than 3 item(s)"}}},
		{"a map value", low, `{"labels": {"kk": "toolong"}, "cardToken": "t-1"}`,
			[]v{{"labels[*]", "string.max_len", "must be at most 5 characters"}}},
		{"a map key", low, `{"labels": {"k": "vv"}, "cardToken": "t-1"}`,
			[]v{{"labels[*]", "string.min_len", "must be at least 2 characters"}}},
		{"a field of a map value", low, `{"holdings": {"XAU": {"amount": "-5"}}, "cardToken": "t-1"}`,
			[]v{{"holdings[*].amount", "int64.gt", "must be greater than 0"}}},
		{"a CEL rule on list elements", low, `{"items": [{"name": "pen"}, {"price": "-3"}], "cardToken": "t-1"}`,
			[]v{{"items[1]", "items.priced", "an item's price must be positive"}}},
		{"a CEL rule on map values reading a hidden field", low, `{"holdings": {"XAU": {"custodian": "Bank"}}, "cardToken": "t-1"}`, []v{}},
		{"a CEL rule on map values reading fields the caller was shown", high, `{"holdings": {"XAU": {"custodian": "Bank"}}, "cardToken": "t-1"}`,
			[]v{{"holdings[*]", "holdings.custodian_with_amount", "a custodian needs an amount"}}},
		// A key rule reads the map field only, so holdings.custodian being
		// hidden does not withhold it; its default message quotes the
		// expression, which holds the key sent, so the message goes.
		{"a CEL expression on map keys", low, `{"holdings": {"XXX": {"amount": "3"}}, "cardToken": "t-1"}`,
			[]v{{"holdings[*]", "this != 'XXX'", ""}}},
		{"a bare CEL expression on a field", low, `{"note": "this note is far longer than allowed", "cardToken": "t-1"}`,
			[]v{{"note", "size(this) <= 20", "\"size(this) <= 20\" returned false"}}},
		{"a message CEL rule reading a hidden field", low, `{"quantity": 5, "limit": 2, "cardToken": "t-1"}`, []v{}},
		{"a message CEL rule reading a field the caller was shown", high, `{"quantity": 5, "limit": 2, "cardToken": "t-1"}`,
			[]v{{"", "order.within_limit", "the quantity is over the limit"}}},
		{"a message CEL rule reading only shown fields", low,
			`{"quantity": 1, "items": [{"name": "pen"}, {"name": "ink"}], "cardToken": "t-1"}`,
			[]v{{"", "order.enough_items", "the quantity is below the number of items"}}},
		{"a field CEL rule reading a hidden subfield", low, `{"shipping": {"postcode": "AB1"}, "cardToken": "t-1"}`, []v{}},
		{"a field CEL rule reading subfields the caller was shown", high, `{"shipping": {"postcode": "AB1"}, "cardToken": "t-1"}`,
			[]v{{"shipping", "shipping.city_with_postcode", "a postcode needs a city"}}},
		{"a field CEL rule on a scalar", low, `{"note": " hi", "cardToken": "t-1"}`,
			[]v{{"note", "note.no_leading_space", "the note starts with a space"}}},
		{"a CEL message quoting the request loses its message, not its rule", low, `{"name": "admin", "cardToken": "t-1"}`,
			[]v{{"", "order.name_not_reserved", ""}}},
		{"a standard message holding a number of the request loses it", low, `{"quantity": 101, "priority": 100, "cardToken": "t-1"}`,
			[]v{{"quantity", "int32.gt_lte", ""}}},
		{"a standard message holding no number of the request keeps it", low, `{"quantity": 101, "priority": 1000, "cardToken": "t-1"}`,
			[]v{{"quantity", "int32.gt_lte", "must be greater than 0 and less than or equal to 100"}}},
		{"a required oneof with a member the caller may not write", low, `{}`, []v{}},
		{"a required oneof whose members the caller may all write", high, `{}`,
			[]v{{"payment", "required", "exactly one field is required in oneof"}}},
		{"a message oneof naming a field the caller may not write", low, `{"coupon": "c1", "staffDiscount": 3, "cardToken": "t-1"}`, []v{}},
		{"a message oneof naming fields the caller may write", high, `{"coupon": "c1", "staffDiscount": 3, "cardToken": "t-1"}`,
			[]v{{"", "message.oneof", "only one of coupon, staff_discount can be set"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := listedOf(t, refused(t, tc.shape, tc.request))
			if !slices.Equal(got, tc.want) {
				t.Errorf("listed %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestViolationsKeepProtovalidatesOrder(t *testing.T) {
	got := listedOf(t, refused(t, high, `{"name": "ab", "quantity": 500, "secretCode": "toolong", "cardToken": "t-1"}`))
	var fields []string
	for _, v := range got {
		fields = append(fields, v.Field)
	}
	if want := []string{"name", "quantity", "secret_code"}; !slices.Equal(fields, want) {
		t.Errorf("listed %q, want %q", fields, want)
	}
}

func TestTheLedgerDetailHoldsEveryViolationListedOrNot(t *testing.T) {
	d := refused(t, low, `{"name": "ab", "secretCode": "toolong", "quantity": 5, "limit": 2, "labels": {"private-key": "toolong"}}`)
	if got := listedOf(t, d); len(got) != 2 {
		t.Fatalf("listed %+v, want name and labels only", got)
	}
	for _, want := range []string{
		"(request): [order.within_limit] the quantity is over the limit (not listed to the caller)",
		"payment: [required] exactly one field is required in oneof (not listed to the caller)",
		"name: [string.min_len] must be at least 3 characters",
		"secret_code: [string.max_len] must be at most 4 characters (not listed to the caller)",
		"labels[*]: [string.max_len] must be at most 5 characters",
	} {
		if !strings.Contains(d.Detail, want) {
			t.Errorf("the detail %q lacks %q", d.Detail, want)
		}
	}
	if strings.Contains(d.Detail, "private-key") {
		t.Errorf("the detail %q names a map key", d.Detail)
	}
}

func TestARequestThatBreaksNoRuleIsValid(t *testing.T) {
	order := tool(t, "place_order")
	req := request(t, order, `{"name": "Ada", "quantity": 2, "items": [{"name": "pen"}], "labels": {"kk": "v"},
		"holdings": {"XAU": {"amount": "5"}}, "shipping": {"city": "Leeds"}, "note": "ok", "cardToken": "t-1"}`)
	if err := input.NewChecker(16).Validate(validator(t, order), order, low, req); err != nil {
		t.Fatalf("a valid request was refused: %v", err)
	}
}

func TestEveryViolationFilteredOutStillAnswers400WithAnEmptyList(t *testing.T) {
	d := refused(t, low, `{"secretCode": "toolong", "cardToken": "t-1"}`)
	status, body := deny.Wire(d)
	if status != http.StatusBadRequest {
		t.Errorf("status %d, want 400", status)
	}
	var wire map[string]json.RawMessage
	if err := json.Unmarshal(body, &wire); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	if got := string(wire["violations"]); got != "[]" {
		t.Errorf("violations are %s in %s, want []", got, body)
	}
}

func TestTheWireBodyListsViolationsWithTheirThreeKeys(t *testing.T) {
	_, body := deny.Wire(refused(t, low, `{"name": "ab", "cardToken": "t-1"}`))
	want := `{"code":"invalid_argument","message":"The request does not match the tool's input.","violations":[{"field":"name","rule":"string.min_len","message":"must be at least 3 characters"}]}`
	if string(body) != want {
		t.Errorf("body %s, want %s", body, want)
	}
}

func TestARuleThatCannotBeEvaluatedFailsTheCallAsOursAndQuotesNothing(t *testing.T) {
	lookup := tool(t, "lookup_label")
	req := request(t, lookup, `{"labels": {"colour": "red"}, "key": "secret-key-42"}`)
	err := input.NewChecker(16).Validate(validator(t, lookup), lookup, high, req)
	if err == nil {
		t.Fatal("a rule that failed to evaluate passed the request")
	}
	if denied := (*deny.Denied)(nil); errors.As(err, &denied) {
		t.Fatalf("refused as the caller's fault: %v", err)
	}
	if strings.Contains(err.Error(), "secret-key-42") {
		t.Errorf("the error %q quotes the request", err)
	}
}

func TestValidatingARequestThePlanDoesNotDescribeFailsTheCall(t *testing.T) {
	order, lookup := tool(t, "place_order"), tool(t, "lookup_label")
	c := input.NewChecker(16)
	cases := map[string]error{
		"another tool's request": c.Validate(validator(t, order), order, low, request(t, lookup, `{}`)),
		"no request":             c.Validate(validator(t, order), order, low, nil),
		"no validator":           c.Validate(nil, order, low, request(t, order, `{}`)),
	}
	for name, err := range cases {
		if err == nil {
			t.Errorf("%s: validated", name)
		} else if denied := (*deny.Denied)(nil); errors.As(err, &denied) {
			t.Errorf("%s: refused as the caller's fault: %v", name, err)
		}
	}
}

func TestValidatingForManyCallersAtOnceAgreesWithValidatingEachAlone(t *testing.T) {
	order := tool(t, "place_order")
	v := validator(t, order)
	shared := input.NewChecker(1) // smaller than the shapes and rules used, so entries are evicted while read
	cases := []struct {
		shape   call.Shape
		request string
		listed  int
	}{
		{low, `{"quantity": 5, "limit": 2, "shipping": {"postcode": "AB1"}, "cardToken": "t-1"}`, 0},
		{high, `{"quantity": 5, "limit": 2, "shipping": {"postcode": "AB1"}, "cardToken": "t-1"}`, 2},
		{low, `{"items": [{"price": "-3"}], "holdings": {"XAU": {"custodian": "Bank"}}, "cardToken": "t-1"}`, 1},
		{high, `{"items": [{"price": "-3"}], "holdings": {"XAU": {"custodian": "Bank"}}, "cardToken": "t-1"}`, 2},
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				tc := cases[(g+i)%len(cases)]
				err := shared.Validate(v, order, tc.shape, request(t, order, tc.request))
				var denied *deny.Denied
				if !errors.As(err, &denied) || len(denied.Extra["violations"].([]input.Violation)) != tc.listed {
					errs <- fmt.Errorf("%s as %v: %v under contention, want %d listed", tc.request, tc.shape.Clearance, err, tc.listed)
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

func TestARefusalListsAtMostMaxListedViolations(t *testing.T) {
	items := strings.Repeat(`{"name": ""},`, 2*input.MaxListed)
	d := refused(t, high, `{"items": [`+strings.TrimSuffix(items, ",")+`]}`)
	if listed := listedOf(t, d); len(listed) != input.MaxListed {
		t.Fatalf("%d violations listed, want %d", len(listed), input.MaxListed)
	}
}
