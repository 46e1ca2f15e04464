package compile

import "fmt"

// limits checks one tool's declared limits: L50–L53 refuse a limit that is
// malformed or can never admit a call, and an id used twice in the tool;
// L54 and L55 warn (LimitWarnings).
func (l *linter) limits(t *Tool) {
	path := t.Path()
	ids := map[string]bool{}
	for _, lim := range t.Policy.GetLimits() {
		what := fmt.Sprintf("limit %q", lim.GetId())
		problems := CheckLimit(lim)
		for _, p := range problems {
			l.report(Error, p.Rule, path, "%s: %s", what, p.Message)
		}
		if ids[lim.GetId()] && lim.GetId() != "" {
			l.report(Error, "L50", path, "%s: the id is used by another limit of the tool", what)
		}
		ids[lim.GetId()] = true
		if len(problems) > 0 {
			continue
		}
		for _, w := range LimitWarnings(t.Policy, lim) {
			l.report(Warning, w.Rule, path, "%s: %s", what, w.Message)
		}
	}
}
