package didyoumean

import "testing"

func TestClosestSuggestsANearDeclaredNameAndNothingFar(t *testing.T) {
	t.Parallel()
	declared := []string{"hr", "finance", "payroll", "legal"}
	tests := []struct {
		name, want string
		ok         bool
	}{
		{"finnace", "finance", true}, // two letters swapped
		{"payrol", "payroll", true},  // one missing
		{"Legal", "legal", true},     // case is an edit
		{"marketing", "", false},     // nothing close
		{"hx", "hr", true},           // a short name, one edit
		{"xy", "", false},            // a short name, two edits
		{"finance", "", false},       // declared: nothing to suggest
		{"", "", false},              // nothing is not a name
	}
	for _, tt := range tests {
		got, ok := Closest(tt.name, declared)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Closest(%q) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestHintIsASuffixOrNothing(t *testing.T) {
	t.Parallel()
	if got := Hint("finnace", []string{"finance"}); got != ` (did you mean "finance"?)` {
		t.Errorf("Hint = %q", got)
	}
	if got := Hint("marketing", []string{"finance"}); got != "" {
		t.Errorf("Hint for a far name = %q, want none", got)
	}
}

func TestDistanceCountsSingleRuneEdits(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"häll", "hall", 1}, {"abc", "abc", 0}} {
		if got := distance(tt.a, tt.b); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
