package listing

import (
	"errors"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// Entry is one row of a listing as data, for a surface that writes the
// listing in an encoding of its own (MCP's tools/list). It holds exactly
// what the row of List holds for the same caller.
type Entry struct {
	// Tool is the tool listed, as its generation serves it (read-only):
	// FQN, route, verb, sets and the declared policy — title, description,
	// guidance, approval, effects.
	Tool *call.Tool
	// InputSchema is the input schema this caller is shown, the bytes List
	// writes. Shared by every caller of the same shape: read-only.
	InputSchema []byte
	// Limits are the tool's limits that apply to this caller (Limits);
	// nil when none does. Delegated says whether the caller is delegated,
	// which is what they depend on.
	Limits    []Limit
	Delegated bool
}

// Page is the listing for p from g as entries, in FQN order, starting at the
// tool whose index in g.Tools is from: at most limit entries (limit > 0).
// It answers the index to resume from, or -1 when the listing is complete.
// Which tools are listed, and each schema, are decided exactly as for List.
func (l *Lister) Page(g *catalogue.Generation, p *call.Principal, audience toolv1.Audience, from, limit int) ([]Entry, int, error) {
	if g == nil || p == nil {
		return nil, 0, errors.New("listing: no generation or no principal")
	}
	if limit <= 0 {
		return nil, 0, errors.New("listing: a page of no entries")
	}
	asked, ok := audienceBit(audience)
	if !ok {
		return nil, 0, errors.New("listing: an audience that is not PERSON, AGENT or RUNNER")
	}
	gc := l.generation(g)
	sc := gc.shape(p.Shape())
	entries := make([]Entry, 0, min(limit, len(g.Tools)))
	more := false
	stop, err := l.each(gc, sc, p, asked, from, func(t *call.Tool, _ *row, schema []byte) bool {
		if len(entries) == limit {
			more = true
			return false
		}
		entries = append(entries, Entry{Tool: t, InputSchema: schema, Limits: Limits(g, t, len(p.Act) > 0), Delegated: len(p.Act) > 0})
		return true
	})
	if err != nil {
		return nil, 0, err
	}
	if !more {
		return entries, -1, nil
	}
	return entries, stop, nil
}
