package didyoumean

import "fmt"

// Closest is the name among declared closest to name by edit distance, and
// whether one is close enough to suggest. Ties go to the earliest declared;
// name itself, when declared, is not a suggestion.
func Closest(name string, declared []string) (string, bool) {
	best, bestDistance := "", maxDistance(name)+1
	for _, d := range declared {
		if d == name {
			continue
		}
		if dist := distance(name, d); dist < bestDistance {
			best, bestDistance = d, dist
		}
	}
	return best, best != ""
}

// Hint is ` (did you mean "NAME"?)` for the closest declared name, or ""
// when none is close: a suffix for a message about name.
func Hint(name string, declared []string) string {
	if closest, ok := Closest(name, declared); ok {
		return fmt.Sprintf(" (did you mean %q?)", closest)
	}
	return ""
}

// maxDistance is how many edits a suggestion may be away: a third of the
// name, at least one, so a short name is not matched to an unrelated one.
func maxDistance(name string) int {
	return max(1, len([]rune(name))/3)
}

// distance is the Levenshtein distance between a and b, in runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
