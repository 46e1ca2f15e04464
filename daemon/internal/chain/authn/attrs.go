package authn

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/garm-dev/garm/daemon/internal/call"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// DefaultAttrMaxLen is the longest attribute string, or list element, in
// bytes, when its declaration's max_len is 0 (docs/decisions/0094).
const DefaultAttrMaxLen = 256

// maxLoggedNames bounds the undeclared attribute names one token logs.
const maxLoggedNames = 16

// foldAttrs is the chain's declared attributes (docs/decisions/0094): the
// subject is their only source, and every actor level can only narrow
// them. An actor carrying a list intersects it; an actor carrying a scalar
// that disagrees, or any value the reader refuses, makes it absent; an
// actor carrying a name its subject lacks adds nothing. A value of the
// wrong JSON type, an empty or over-long string, or a list over max_items
// is absent. undeclared are the names, at any level, that tax does not
// declare, sorted and once each, for the log.
func foldAttrs(levels []level, tax Taxonomy) (attrs map[string]call.Attr, undeclared []string) {
	for i := range levels {
		for name := range levels[i].attrs {
			if tax.DeclaredAttribute(name) == nil && len(undeclared) < maxLoggedNames {
				undeclared = append(undeclared, clip(name))
			}
		}
	}
	if len(undeclared) > 0 {
		slices.Sort(undeclared)
		undeclared = slices.Compact(undeclared)
	}
	subject := levels[0].attrs
	if len(subject) == 0 {
		return nil, undeclared
	}
next:
	for name, raw := range subject {
		decl := tax.DeclaredAttribute(name)
		if decl == nil {
			continue
		}
		v, ok := readAttr(raw, decl)
		if !ok {
			continue
		}
		for i := 1; i < len(levels); i++ {
			raw, carried := levels[i].attrs[name]
			if !carried {
				continue
			}
			w, ok := readAttr(raw, decl)
			if !ok {
				continue next
			}
			if v, ok = narrow(v, w); !ok {
				continue next
			}
		}
		if attrs == nil {
			attrs = make(map[string]call.Attr, len(subject))
		}
		attrs[name] = v
	}
	return attrs, undeclared
}

// narrow is v as an actor carrying w leaves it: a list intersected with
// w's, a scalar kept only when w is equal to it.
func narrow(v, w call.Attr) (call.Attr, bool) {
	switch v.Type {
	case toolv1.Attribute_TYPE_STRING_LIST:
		kept := make([]string, 0, min(len(v.List), len(w.List)))
		for _, s := range v.List {
			if _, ok := slices.BinarySearch(w.List, s); ok {
				kept = append(kept, s)
			}
		}
		v.List = kept
		return v, true
	default:
		return v, v.String == w.String && v.Int == w.Int && v.Bool == w.Bool
	}
}

// readAttr is raw as decl declares it, or false when the reader refuses it:
// the wrong JSON type (null included), an empty string or one longer than
// the declared bound, an int that is not an integer literal in the int64
// range, a list over max_items or holding anything but such strings.
func readAttr(raw json.RawMessage, decl *toolv1.Attribute) (call.Attr, bool) {
	maxLen := int(decl.GetMaxLen())
	if maxLen == 0 {
		maxLen = DefaultAttrMaxLen
	}
	v := call.Attr{Type: decl.GetType()}
	raw = bytes.TrimSpace(raw)
	switch v.Type {
	case toolv1.Attribute_TYPE_STRING:
		s, ok := attrString(raw, maxLen)
		v.String = s
		return v, ok
	case toolv1.Attribute_TYPE_INT:
		// Only an integer literal: 1.0 and 1e3 are numbers, not ints, and
		// a value near the bound of float64 would round.
		if !integerLiteral(raw) {
			return v, false
		}
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return v, false
		}
		v.Int = n
		return v, true
	case toolv1.Attribute_TYPE_BOOL:
		switch string(raw) {
		case "true":
			v.Bool = true
			return v, true
		case "false":
			return v, true
		}
		return v, false
	case toolv1.Attribute_TYPE_STRING_LIST:
		var items []json.RawMessage
		if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
			return v, false
		}
		if decl.GetMaxItems() == 0 || len(items) > int(decl.GetMaxItems()) {
			return v, false
		}
		v.List = make([]string, 0, len(items))
		for _, item := range items {
			s, ok := attrString(bytes.TrimSpace(item), maxLen)
			if !ok {
				return call.Attr{Type: v.Type}, false
			}
			v.List = append(v.List, s)
		}
		slices.Sort(v.List)
		v.List = slices.Compact(v.List)
		return v, true
	}
	return v, false
}

// attrString is raw as a non-empty JSON string of at most maxLen bytes.
func attrString(raw []byte, maxLen int) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, s != "" && len(s) <= maxLen
}

// integerLiteral reports whether raw is a JSON number with neither
// fraction nor exponent: -?(0|[1-9][0-9]*).
func integerLiteral(raw []byte) bool {
	digits := bytes.TrimPrefix(raw, []byte("-"))
	if len(digits) == 0 || (digits[0] == '0' && len(digits) > 1) {
		return false
	}
	for _, b := range digits {
		if b < '0' || b > '9' {
			return false
		}
	}
	return true
}
