package idp

import (
	"maps"
	"math"
	"regexp"
	"slices"
)

// attrName is the grammar of an attribute name, the catalogue's (garm.tool.v1.Attribute.name):
// rules read it as principal.attrs.<name>.
var attrName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// validateAttrs checks a persona's attrs: every name is well formed and every value is one of
// the four shapes an attribute can have (a non-empty string, an integer in the int64 range, a
// boolean, a list of non-empty strings). The IdP does not know which attributes a catalogue
// declares, nor their bounds: garmd is the judge of those, and binds an attribute only when the
// serving catalogue declares it with this type. What is refused here is what no declaration could
// accept, so a typo fails at load rather than silently costing a caller an attribute at garmd.
func validateAttrs(path string, attrs map[string]any, report func(string, ...any)) {
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		if !attrName.MatchString(name) {
			report("%s: attrs: name %q does not match %s", path, name, attrName)
		}
		if _, ok := attrValue(attrs[name]); !ok {
			report("%s: attrs.%s: not a non-empty string, an integer, a boolean or a list of non-empty strings", path, name)
		}
	}
}

// attrValue is v in its canonical shape: string, int64, bool or []string (an empty list stays an
// empty list, never nil: a caller with no accounts is not a caller whose accounts are unknown).
// It reports false for any other shape: null, a float, a map, a list holding anything but
// non-empty strings, an empty string, an integer outside int64.
func attrValue(v any) (any, bool) {
	switch v := v.(type) {
	case string:
		return v, v != ""
	case bool:
		return v, true
	case int:
		return int64(v), true
	case int64:
		return v, true
	case uint64:
		return int64(v), v <= math.MaxInt64
	case []string:
		return attrList(v)
	case []any:
		list := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			list = append(list, s)
		}
		return attrList(list)
	}
	return nil, false
}

func attrList(list []string) (any, bool) {
	if slices.Contains(list, "") {
		return nil, false
	}
	return append([]string{}, list...), true
}

// canonicalAttrs is a deep copy of valid attrs in their canonical shapes; nil when there are none,
// so a persona without attrs issues a token without garm.attrs.
func canonicalAttrs(attrs map[string]any) map[string]any {
	if len(attrs) == 0 {
		return nil
	}
	out := make(map[string]any, len(attrs))
	for name, v := range attrs {
		out[name], _ = attrValue(v)
	}
	return out
}
