package wire

import "strings"

// Covers reports whether any of a stream's subject filters matches every
// subject that subjects (itself a filter, e.g. "garm.v1.ledger.*.*")
// matches: whether the stream takes everything garm will publish there.
// garmd asks it of each stream it checks at startup.
func Covers(filters []string, subjects string) bool {
	for _, f := range filters {
		if covers(f, subjects) {
			return true
		}
	}
	return false
}

// covers is Covers for one filter.
func covers(filter, subjects string) bool {
	f, s := strings.Split(filter, "."), strings.Split(subjects, ".")
	for i, ft := range f {
		if ft == ">" {
			return i < len(s)
		}
		if i >= len(s) || s[i] == ">" {
			return false
		}
		if ft != "*" && ft != s[i] {
			return false
		}
	}
	return len(f) == len(s)
}
