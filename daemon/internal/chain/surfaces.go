package chain

import (
	"net/http"
	"slices"
	"sort"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/listing"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// What a surface other than the HTTP route asks of the chain besides a
// call by route: an admission (MCP's lifecycle methods), a page of the
// listing (tools/list), a tool named by FQN (tools/call), and the verdict
// on what the surface could not read (ArgumentFault) or on its own
// approval token (requestState). The surface translates; the chain
// authenticates, decides and records.

// PageRequest is a page of a listing, at most Size tools.
type PageRequest struct {
	// Resume, when set, reads the surface's cursor against the generation
	// the call pinned: the FQN of the last tool the previous page showed,
	// or an error when the cursor is not one the surface issued for that
	// generation (refused invalid_argument; its text is the row's
	// detail). Nil is the first page.
	Resume func(gen *catalogue.Generation) (after string, err error)
	Size   int
}

// Page is a page of the caller's listing, from the generation the call
// pinned.
type Page struct {
	Generation *catalogue.Generation
	Entries    []listing.Entry
	// More is true when tools the caller may see follow the page.
	More bool
}

// Holder is who a surface's approval token was issued to, as the caller's
// principal names them.
type Holder struct {
	Subject, Tenant string
	// Act is the actors' subjects, outermost first.
	Act []string
}

// HolderOf is p as a Holder.
func HolderOf(p *call.Principal) Holder {
	act := make([]string, len(p.Act))
	for i, a := range p.Act {
		act[i] = a.Subject
	}
	return Holder{Subject: p.Subject, Tenant: p.Tenant, Act: act}
}

func (h *Holder) is(p *call.Principal) bool {
	o := HolderOf(p)
	return h.Subject == o.Subject && h.Tenant == o.Tenant && slices.Equal(h.Act, o.Act)
}

// page is one page of the caller's agent listing, from the tool after
// the cursor.
func (c *Chain) page(gen *catalogue.Generation, p *call.Principal, pr *PageRequest, st *state) (*Response, error) {
	from := 0
	if pr.Resume != nil {
		after, err := pr.Resume(gen)
		if err != nil {
			return nil, deny.Deny(deny.InvalidArgument, err.Error())
		}
		from = sort.Search(len(gen.Tools), func(i int) bool { return gen.Tools[i].FQN > after })
	}
	entries, next, err := c.Lister.Page(gen, p, toolv1.Audience_AUDIENCE_AGENT, from, pr.Size)
	if err != nil {
		return nil, deny.Fail(deny.Internal, "listing", err.Error())
	}
	st.noRecord = true
	return &Response{Status: http.StatusOK, ContentType: "application/json", Page: &Page{Generation: gen, Entries: entries, More: next >= 0}}, nil
}

// approvalToken refuses a call whose surface could not open its approval
// token, or whose token was issued to another caller.
func approvalToken(req *Request, p *call.Principal) error {
	switch {
	case req.ApprovalFault != "":
		return deny.Deny(deny.ApprovalRefused, req.ApprovalFault)
	case req.ApprovalHolder != nil && !req.ApprovalHolder.is(p):
		return deny.Deny(deny.ApprovalRefused, "the approval token of request "+req.Approval+" is another caller's")
	}
	return nil
}

// route is the tool req names, by route or by FQN, or nil. A tool named by
// FQN gives the row its route, so that a row reads the same whichever
// surface the call came by.
func route(gen *catalogue.Generation, req *Request, st *state) *call.Tool {
	if req.ToolName == "" {
		return gen.Route(req.Path)
	}
	i := sort.Search(len(gen.Tools), func(i int) bool { return gen.Tools[i].FQN >= req.ToolName })
	if i == len(gen.Tools) || gen.Tools[i].FQN != req.ToolName {
		return nil
	}
	st.row.Method = gen.Tools[i].Method
	return gen.Tools[i]
}
