package wire

import toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"

// The clearance lattice (design 3.2) is read here so that garmd, which checks a
// grant's approver_clearance against a tool's approver_min_clearance, and the
// approvals service, which shows an approver only the requests they may
// decide, compare clearances by one rule (decision 0056).

// ParseClearance reads a clearance as a token or grant claim spells it: the
// enum name bare (INTERNAL) or prefixed (CLEARANCE_INTERNAL), ASCII
// case-insensitive. UNSPECIFIED, an unknown name and anything outside ASCII
// are refused.
func ParseClearance(s string) (toolv1.Clearance, bool) {
	n, ok := EnumValue(s, "CLEARANCE_", toolv1.Clearance_value)
	if !ok || n == int32(toolv1.Clearance_CLEARANCE_UNSPECIFIED) {
		return 0, false
	}
	return toolv1.Clearance(n), true
}

// ClearanceAllows is the lattice's clearance test: false when either side is
// unspecified, else have ≥ need in the enum's order.
func ClearanceAllows(have, need toolv1.Clearance) bool {
	return have != toolv1.Clearance_CLEARANCE_UNSPECIFIED &&
		need != toolv1.Clearance_CLEARANCE_UNSPECIFIED && have >= need
}

// EnumValue looks s up in an enum's value map, upper-casing ASCII letters
// and adding prefix when s lacks it. Anything outside ASCII is unknown, so
// that no Unicode case mapping can make two spellings of one name.
func EnumValue(s, prefix string, values map[string]int32) (int32, bool) {
	const longest = 32
	if len(s) == 0 || len(s) > longest {
		return 0, false
	}
	var buf [64]byte
	up := buf[:0]
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		case 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_':
		default:
			return 0, false
		}
		up = append(up, c)
	}
	name := string(up)
	if len(name) < len(prefix) || name[:len(prefix)] != prefix {
		name = prefix + name
	}
	n, ok := values[name]
	return n, ok
}
