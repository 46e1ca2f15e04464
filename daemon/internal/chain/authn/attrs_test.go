package authn

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/jwtclaims"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// The attributes the tests declare: a short string, a list of at most
// three, an int and a bool.
func declaredAttrs() map[string]*toolv1.Attribute {
	return map[string]*toolv1.Attribute{
		"customer_id": {Name: "customer_id", Type: toolv1.Attribute_TYPE_STRING, MaxLen: 8},
		"accounts":    {Name: "accounts", Type: toolv1.Attribute_TYPE_STRING_LIST, MaxItems: 3, MaxLen: 8},
		"limit":       {Name: "limit", Type: toolv1.Attribute_TYPE_INT},
		"staff":       {Name: "staff", Type: toolv1.Attribute_TYPE_BOOL},
		"region":      {Name: "region", Type: toolv1.Attribute_TYPE_STRING},
	}
}

func attrsFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	f.tax.attrs = declaredAttrs()
	return f
}

// withAttrs is the fixture's good claims with garm.attrs set to attrs (a
// JSON object's text) at the subject, and one actor per further argument
// carrying those attrs ("" carries none).
func (f *fixture) withAttrs(t *testing.T, subject string, actors ...string) map[string]any {
	t.Helper()
	c := set(f.claims(), "garm.attrs", rawJSON(t, subject))
	path := "act"
	for i, a := range actors {
		lvl := actor("agent-"+string(rune('a'+i)), "INTERNAL", []string{"finance"}, []string{"READ"})
		if a != "" {
			lvl["garm"].(map[string]any)["attrs"] = rawJSON(t, a)
		}
		c = set(c, path, lvl)
		path += ".act"
	}
	return c
}

func rawJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber() // so that 1e3 is signed as written
	if err := d.Decode(&v); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

func str(s string) call.Attr { return call.Attr{Type: toolv1.Attribute_TYPE_STRING, String: s} }
func list(s ...string) call.Attr {
	return call.Attr{Type: toolv1.Attribute_TYPE_STRING_LIST, List: append([]string{}, s...)}
}

func TestAnAttributeIsBoundOnlyWithADeclaredWellTypedValue(t *testing.T) {
	t.Parallel()
	f := attrsFixture(t)
	cases := []struct {
		name  string
		attrs string
		want  map[string]call.Attr
	}{
		{"no attrs leave every attribute absent", `{}`, nil},
		{"a string within its bound is bound", `{"customer_id":"C-1001"}`, map[string]call.Attr{"customer_id": str("C-1001")}},
		{"an empty string is absent", `{"customer_id":""}`, nil},
		{"a string over max_len is absent", `{"customer_id":"C-1001-XY"}`, nil},
		{"a string over the default bound is absent", `{"region":"` + strings.Repeat("e", DefaultAttrMaxLen+1) + `"}`, nil},
		{"a string at the default bound is bound", `{"region":"` + strings.Repeat("e", DefaultAttrMaxLen) + `"}`,
			map[string]call.Attr{"region": str(strings.Repeat("e", DefaultAttrMaxLen))}},
		{"a number where a string is declared is absent", `{"customer_id":1001}`, nil},
		{"null is absent", `{"customer_id":null,"accounts":null,"limit":null,"staff":null}`, nil},
		{"a list where a string is declared is absent", `{"customer_id":["C-1001"]}`, nil},
		{"an empty list is bound, and is not absent", `{"accounts":[]}`, map[string]call.Attr{"accounts": list()}},
		{"a list at max_items is bound, sorted and distinct", `{"accounts":["A-3","A-1","A-3"]}`, map[string]call.Attr{"accounts": list("A-1", "A-3")}},
		{"a list over max_items is absent", `{"accounts":["A-1","A-2","A-3","A-4"]}`, nil},
		{"a list holding an empty string is absent", `{"accounts":["A-1",""]}`, nil},
		{"a list holding a number is absent", `{"accounts":["A-1",2]}`, nil},
		{"a list holding an over-long string is absent", `{"accounts":["A-1","A-123456789"]}`, nil},
		{"a string where a list is declared is absent", `{"accounts":"A-1"}`, nil},
		{"an integer is bound", `{"limit":-250000}`, map[string]call.Attr{"limit": {Type: toolv1.Attribute_TYPE_INT, Int: -250000}}},
		{"a fraction is absent", `{"limit":1.5}`, nil},
		{"an integral number written with a fraction is absent", `{"limit":100.0}`, nil},
		{"an exponent is absent", `{"limit":1e3}`, nil},
		{"an integer beyond int64 is absent", `{"limit":9223372036854775808}`, nil},
		{"a numeric string is absent", `{"limit":"100"}`, nil},
		{"a bool is bound", `{"staff":false}`, map[string]call.Attr{"staff": {Type: toolv1.Attribute_TYPE_BOOL}}},
		{"a string where a bool is declared is absent", `{"staff":"true"}`, nil},
		{"one bad value costs only that attribute", `{"customer_id":7,"staff":true}`, map[string]call.Attr{"staff": {Type: toolv1.Attribute_TYPE_BOOL, Bool: true}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := f.accept(t, f.sign(t, f.withAttrs(t, c.attrs)))
			if !attrsEqual(p.Attrs, c.want) {
				t.Fatalf("attrs %+v, want %+v", p.Attrs, c.want)
			}
		})
	}
}

func TestActorsCanOnlyNarrowTheirSubjectsAttributes(t *testing.T) {
	t.Parallel()
	f := attrsFixture(t)
	subject := `{"customer_id":"C-1001","accounts":["A-1","A-2","A-3"],"limit":500}`
	cases := []struct {
		name   string
		actors []string
		want   map[string]call.Attr
	}{
		{"an actor carrying nothing leaves them as they are", []string{""},
			map[string]call.Attr{"customer_id": str("C-1001"), "accounts": list("A-1", "A-2", "A-3"), "limit": {Type: toolv1.Attribute_TYPE_INT, Int: 500}}},
		{"an actor's list intersects the subject's", []string{`{"accounts":["A-2","A-9"]}`},
			map[string]call.Attr{"customer_id": str("C-1001"), "accounts": list("A-2"), "limit": {Type: toolv1.Attribute_TYPE_INT, Int: 500}}},
		{"every actor's list intersects it", []string{`{"accounts":["A-1","A-2"]}`, "", `{"accounts":["A-2","A-3"]}`},
			map[string]call.Attr{"customer_id": str("C-1001"), "accounts": list("A-2"), "limit": {Type: toolv1.Attribute_TYPE_INT, Int: 500}}},
		{"disjoint lists leave an empty list, bound", []string{`{"accounts":["A-9"]}`},
			map[string]call.Attr{"customer_id": str("C-1001"), "accounts": list(), "limit": {Type: toolv1.Attribute_TYPE_INT, Int: 500}}},
		{"an actor agreeing on a scalar keeps it", []string{`{"customer_id":"C-1001"}`},
			map[string]call.Attr{"customer_id": str("C-1001"), "accounts": list("A-1", "A-2", "A-3"), "limit": {Type: toolv1.Attribute_TYPE_INT, Int: 500}}},
		{"an actor disagreeing on a scalar makes it absent", []string{`{"customer_id":"C-2002","limit":100}`},
			map[string]call.Attr{"accounts": list("A-1", "A-2", "A-3")}},
		{"an actor's malformed value makes it absent", []string{`{"accounts":"A-1","limit":"500"}`},
			map[string]call.Attr{"customer_id": str("C-1001")}},
		{"an actor's list over max_items makes it absent", []string{`{"accounts":["A-1","A-2","A-3","A-4"]}`},
			map[string]call.Attr{"customer_id": str("C-1001"), "limit": {Type: toolv1.Attribute_TYPE_INT, Int: 500}}},
		{"an actor cannot add an attribute its subject lacks", []string{`{"staff":true,"region":"eu"}`},
			map[string]call.Attr{"customer_id": str("C-1001"), "accounts": list("A-1", "A-2", "A-3"), "limit": {Type: toolv1.Attribute_TYPE_INT, Int: 500}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := f.accept(t, f.sign(t, f.withAttrs(t, subject, c.actors...)))
			if !attrsEqual(p.Attrs, c.want) {
				t.Fatalf("attrs %+v, want %+v", p.Attrs, c.want)
			}
		})
	}
}

func TestAnActorCannotWidenAListBeyondItsSubjects(t *testing.T) {
	t.Parallel()
	f := attrsFixture(t)
	p := f.accept(t, f.sign(t, f.withAttrs(t, `{"accounts":["A-1"]}`, `{"accounts":["A-1","A-2","A-3"]}`)))
	if !attrsEqual(p.Attrs, map[string]call.Attr{"accounts": list("A-1")}) {
		t.Fatalf("attrs %+v: the actor widened its subject's list", p.Attrs)
	}
}

func TestAnUndeclaredAttributeIsIgnoredAndLogged(t *testing.T) {
	t.Parallel()
	f := attrsFixture(t)
	p := f.accept(t, f.sign(t, f.withAttrs(t, `{"customer_id":"C-1","favourite_colour":"SECRET-CANARY"}`, `{"shoe_size":44}`)))
	if !attrsEqual(p.Attrs, map[string]call.Attr{"customer_id": str("C-1")}) {
		t.Fatalf("attrs %+v", p.Attrs)
	}
	logged := f.logged.String()
	for _, name := range []string{"favourite_colour", "shoe_size"} {
		if !strings.Contains(logged, name) {
			t.Errorf("the log does not name the undeclared attribute %s: %s", name, logged)
		}
	}
	if strings.Contains(logged, "SECRET-CANARY") {
		t.Errorf("the log carries an attribute's value: %s", logged)
	}
}

func TestAttrsThatAreNotAnObjectRefuseTheToken(t *testing.T) {
	t.Parallel()
	f := attrsFixture(t)
	for _, attrs := range []string{`[]`, `"customer_id"`, `null`, `7`} {
		detail := f.refuse(t, "Bearer "+f.sign(t, f.withAttrs(t, attrs)))
		if !strings.Contains(detail, "garm.attrs is not an object") {
			t.Errorf("attrs %s refused for %q", attrs, detail)
		}
		detail = f.refuse(t, "Bearer "+f.sign(t, f.withAttrs(t, `{}`, attrs)))
		if !strings.Contains(detail, "act level 1: claim garm.attrs is not an object") {
			t.Errorf("an actor's attrs %s refused for %q", attrs, detail)
		}
	}
}

func TestAttributesAreFoldedAgainstTheServingGenerationsDeclarations(t *testing.T) {
	t.Parallel()
	f := attrsFixture(t)
	token := f.sign(t, f.withAttrs(t, `{"customer_id":"C-1","staff":true}`))
	p := f.accept(t, token)
	next := newTaxonomy("finance")
	next.attrs = map[string]*toolv1.Attribute{"staff": declaredAttrs()["staff"]}
	q, err := f.auth.Authenticate(t.Context(), "Bearer "+token, next)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Attrs) != 2 || !attrsEqual(q.Attrs, map[string]call.Attr{"staff": {Type: toolv1.Attribute_TYPE_BOOL, Bool: true}}) {
		t.Fatalf("first generation %+v, second %+v", p.Attrs, q.Attrs)
	}
}

func attrsEqual(a, b map[string]call.Attr) bool {
	return maps.EqualFunc(a, b, func(x, y call.Attr) bool {
		return x.Type == y.Type && x.String == y.String && x.Int == y.Int && x.Bool == y.Bool &&
			slices.Equal(x.List, y.List) && (x.List == nil) == (y.List == nil)
	})
}

// FuzzAttributeFold feeds the reader and the fold arbitrary garm.attrs
// objects at the subject and one actor. Nothing may panic, and whatever is
// bound must be declared, well typed, within its bounds, and no wider than
// what the subject and the actor each carried.
func FuzzAttributeFold(f *testing.F) {
	seeds := [][2]string{
		{`{"customer_id":"C-1","accounts":["A-1","A-2"],"limit":5,"staff":true}`, `{"accounts":["A-2"]}`},
		{`{"accounts":[]}`, `{}`},
		{`{"limit":1e3,"customer_id":""}`, `{"limit":1}`},
		{`{"accounts":["A-1","A-1","A-1","A-1"]}`, `{"customer_id":"x"}`},
		{`{"x":{"y":1}}`, `[]`},
	}
	for _, s := range seeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	decls := declaredAttrs()
	tax := newTaxonomy("finance")
	tax.attrs = decls
	f.Fuzz(func(t *testing.T, subject, actorAttrs []byte) {
		sub, err := jwtclaims.AsObject(subject)
		if err != nil {
			return
		}
		act, _ := jwtclaims.AsObject(actorAttrs)
		levels := []level{{subject: "s", attrs: sub}, {subject: "a", attrs: act}}
		attrs, undeclared := foldAttrs(levels, tax)
		if len(undeclared) > maxLoggedNames {
			t.Fatalf("%d undeclared names logged", len(undeclared))
		}
		for name, v := range attrs {
			decl := decls[name]
			if decl == nil || v.Type != decl.GetType() {
				t.Fatalf("bound %q as %v, declared %v", name, v.Type, decl)
			}
			subjectsOwn, ok := readAttr(sub[name], decl)
			if !ok {
				t.Fatalf("bound %q that the subject does not validly carry", name)
			}
			if v.Type != toolv1.Attribute_TYPE_STRING_LIST {
				if v.String != subjectsOwn.String || v.Int != subjectsOwn.Int || v.Bool != subjectsOwn.Bool {
					t.Fatalf("bound %q as %+v, the subject carried %+v", name, v, subjectsOwn)
				}
				if v.Type == toolv1.Attribute_TYPE_STRING && (v.String == "" || len(v.String) > maxLenOf(decl)) {
					t.Fatalf("bound %q out of bounds: %d bytes", name, len(v.String))
				}
				continue
			}
			if len(v.List) > int(decl.GetMaxItems()) || !slices.IsSorted(v.List) {
				t.Fatalf("bound %q as %v", name, v.List)
			}
			actorsOwn, carried := act[name]
			var actorList []string
			if carried {
				w, ok := readAttr(actorsOwn, decl)
				if !ok {
					t.Fatalf("bound %q that the actor carried malformed", name)
				}
				actorList = w.List
			}
			for _, s := range v.List {
				if _, ok := slices.BinarySearch(subjectsOwn.List, s); !ok {
					t.Fatalf("bound %q holds %q, which the subject lacks", name, s)
				}
				if _, ok := slices.BinarySearch(actorList, s); carried && !ok {
					t.Fatalf("bound %q holds %q, which the actor lacks", name, s)
				}
			}
		}
	})
}

func maxLenOf(d *toolv1.Attribute) int {
	if d.GetMaxLen() == 0 {
		return DefaultAttrMaxLen
	}
	return int(d.GetMaxLen())
}
