package input_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/input"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// renderedField is the grammar of a listed path: field names, each with an
// optional [index] or [*]. Nothing in it can hold a string of the request.
var renderedField = regexp.MustCompile(`^([a-z_]+(\[[0-9]+\]|\[\*\])?(\.[a-z_]+(\[[0-9]+\]|\[\*\])?)*)?$`)

// FuzzListedViolationsQuoteNothing builds place_order requests from random
// strings and numbers — in top-level fields, list elements, map keys and map
// values — and checks what both a low and a high caller are told: no listed
// message holds a string of the request, and no listed field holds a map
// key or a string of the request.
func FuzzListedViolationsQuoteNothing(f *testing.F) {
	f.Add("admin", " note", "k", "toolong", "XAU", "", "Bank", int32(101), int64(-5), int32(100))
	f.Add("ab", "fine", "kk", "v", "XXX", "pen", "", int32(0), int64(3), int32(1))
	f.Add("root", "this note is far longer than allowed", "private-key", "secret", "h", "x", "c", int32(5), int64(0), int32(5))
	order := tool(f, "place_order")
	v := validator(f, order)
	c := input.NewChecker(64)
	fields := order.Input.Fields()
	field := func(md protoreflect.MessageDescriptor, name string) protoreflect.FieldDescriptor {
		return md.Fields().ByName(protoreflect.Name(name))
	}
	f.Fuzz(func(t *testing.T, name, note, labelKey, labelValue, holdingKey, itemName, custodian string, quantity int32, amount int64, priority int32) {
		strs := []string{name, note, labelKey, labelValue, holdingKey, itemName, custodian}
		for _, s := range strs {
			if !utf8.ValidString(s) {
				return // a decoded request never holds one
			}
		}
		req := dynamicpb.NewMessage(order.Input)
		req.Set(fields.ByName("name"), protoreflect.ValueOfString(name))
		req.Set(fields.ByName("note"), protoreflect.ValueOfString(note))
		req.Set(fields.ByName("quantity"), protoreflect.ValueOfInt32(quantity))
		req.Set(fields.ByName("priority"), protoreflect.ValueOfInt32(priority))
		labels := req.Mutable(fields.ByName("labels")).Map()
		labels.Set(protoreflect.ValueOfString(labelKey).MapKey(), protoreflect.ValueOfString(labelValue))
		holdings := req.Mutable(fields.ByName("holdings")).Map()
		holding := holdings.NewValue()
		hmd := holding.Message().Descriptor()
		holding.Message().Set(field(hmd, "amount"), protoreflect.ValueOfInt64(amount))
		if custodian != "" {
			holding.Message().Set(field(hmd, "custodian"), protoreflect.ValueOfString(custodian))
		}
		holdings.Set(protoreflect.ValueOfString(holdingKey).MapKey(), holding)
		items := req.Mutable(fields.ByName("items")).List()
		item := items.NewElement()
		item.Message().Set(field(item.Message().Descriptor(), "name"), protoreflect.ValueOfString(itemName))
		items.Append(item)

		for _, shape := range []call.Shape{low, high} {
			err := c.Validate(v, order, shape, req)
			if err == nil {
				continue
			}
			var denied *deny.Denied
			if !errors.As(err, &denied) {
				t.Fatalf("not a refusal: %v", err)
			}
			for _, listed := range denied.Extra["violations"].([]input.Violation) {
				if !renderedField.MatchString(listed.Field) {
					t.Errorf("the field %q is not a path of names", listed.Field)
				}
				for _, s := range strs {
					if s == "" {
						continue
					}
					if strings.Contains(listed.Message, s) {
						t.Errorf("the message %q of %s quotes %q", listed.Message, listed.Rule, s)
					}
					if strings.ContainsFunc(s, outsideFieldGrammar) && strings.Contains(listed.Field, s) {
						t.Errorf("the field %q quotes %q", listed.Field, s)
					}
				}
			}
		}
	})
}

// outsideFieldGrammar is true of a rune no rendered path holds: a string
// holding one can only be in a path by being quoted into it.
func outsideFieldGrammar(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("_.[]*", r))
}
