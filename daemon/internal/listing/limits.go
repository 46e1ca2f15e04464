package listing

import (
	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/chain/limit"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// Limit is a tool's limit as a caller is shown it before calling: what it
// protects, over which window, and how much it admits. A concurrency
// bound's window is "in_flight".
type Limit struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	Window      string `json:"window"`
	Limit       uint32 `json:"limit"`
}

// Limits are the limits of t in g that apply to a caller, delegated or
// not, in id order: a limit keyed on the agent applies only to a delegated
// call. nil when none does.
func Limits(g *catalogue.Generation, t *call.Tool, delegated bool) []Limit {
	var out []Limit
	for _, l := range g.Limits().Of(t) {
		if l.AgentKeyed && !delegated {
			continue
		}
		out = append(out, Limit{ID: l.ID, Description: l.Description, Window: windowName(l), Limit: l.Count})
	}
	return out
}

func windowName(l *limit.Limit) string {
	if l.Concurrency {
		return "in_flight"
	}
	return windowNames[l.Window]
}

var windowNames = map[toolv1.Limit_Window]string{
	toolv1.Limit_WINDOW_SECOND: "second",
	toolv1.Limit_WINDOW_MINUTE: "minute",
	toolv1.Limit_WINDOW_HOUR:   "hour",
	toolv1.Limit_WINDOW_DAY:    "day",
}

// agentKeyed reports whether some limit of t applies only to delegated
// callers: then the tool's entry differs by delegation.
func agentKeyed(g *catalogue.Generation, t *call.Tool) bool {
	for _, l := range g.Limits().Of(t) {
		if l.AgentKeyed {
			return true
		}
	}
	return false
}
