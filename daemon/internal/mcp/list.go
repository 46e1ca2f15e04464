package mcp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// listTools answers tools/list: the caller's own listing for audience AGENT,
// from the lister that answers ListTools, a page at a time. Like a
// successful ListTools it writes no ledger row.
// It returns the error it answered, nil when it answered a result.
func (s *Server) listTools(w http.ResponseWriter, gen *catalogue.Generation, p *call.Principal, req *rpcRequest, e era) *rpcError {
	var params struct {
		Cursor *string `json:"cursor"`
	}
	if req.params != nil {
		if _, err := members(req.params); err != nil || json.Unmarshal(req.params, &params) != nil {
			writeError(w, req.id, errInvalidParams)
			return errInvalidParams
		}
	}
	from := 0
	if params.Cursor != nil {
		var ok bool
		if from, ok = s.resume(gen, *params.Cursor); !ok {
			writeError(w, req.id, errInvalidCursor)
			return errInvalidCursor
		}
	}
	entries, next, err := s.chain.Lister.Page(gen, p, toolv1.Audience_AUDIENCE_AGENT, from, s.pageSize)
	if err != nil {
		writeError(w, req.id, errInternal)
		return errInternal
	}
	size := 256 + len(req.id)
	for _, en := range entries {
		size += len(en.InputSchema) + 512
	}
	// The answer is built in place, envelope and all: a listing can be
	// most of a megabyte, and is copied once, onto the wire.
	out := make([]byte, 0, size)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, req.id...)
	out = append(out, `,"result":{"tools":[`...)
	for i, en := range entries {
		tj, err := s.tools.of(gen, en.Tool)
		if err != nil {
			writeError(w, req.id, errInternal)
			return errInternal
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, tj.before...)
		out = append(out, en.InputSchema...)
		out = append(out, tj.after...)
	}
	out = append(out, ']')
	if next >= 0 && len(entries) > 0 {
		out = append(out, `,"nextCursor":`...)
		out = appendString(out, s.cursor(gen, entries[len(entries)-1].Tool.FQN))
	}
	// Each caller has a list of its own: no one else may be served it
	// from a cache (the SDK's default scope is public).
	out = append(out, `,"ttlMs":0,"cacheScope":"private"`...)
	out = s.appendEra(out, e)
	out = append(out, "}}"...)
	writeJSON(w, http.StatusOK, out)
	return nil
}

// appendEra adds what a 2026-07-28 result carries and a 2025-11-25 one does
// not: resultType, and the server's identity in _meta.
func (s *Server) appendEra(out []byte, e era) []byte {
	if !e.stateless {
		return out
	}
	out = append(out, `,"resultType":"complete","_meta":{"`+metaServerInfo+`":`...)
	out = append(out, s.serverInfo...)
	return append(out, '}')
}

func appendString(out []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(out, b...)
}

// cursor is where the next page starts: after the tool named last, which
// the caller was shown, bound by a MAC to the generation it was listed
// from. It tells the caller nothing it was not shown.
func (s *Server) cursor(gen *catalogue.Generation, lastFQN string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(lastFQN)) + "." + base64.RawURLEncoding.EncodeToString(s.cursorMAC(gen, lastFQN))
}

func (s *Server) cursorMAC(gen *catalogue.Generation, lastFQN string) []byte {
	mac := hmac.New(sha256.New, s.cursorKey)
	mac.Write([]byte(gen.Digest))
	mac.Write([]byte{0})
	mac.Write([]byte(lastFQN))
	return mac.Sum(nil)[:16]
}

// resume is the index in gen.Tools a cursor resumes at; false when the
// cursor is not one this server issued for gen.
func (s *Server) resume(gen *catalogue.Generation, cursor string) (int, bool) {
	name64, mac64, ok := strings.Cut(cursor, ".")
	if !ok || len(cursor) > 1024 {
		return 0, false
	}
	name, err1 := base64.RawURLEncoding.Strict().DecodeString(name64)
	mac, err2 := base64.RawURLEncoding.Strict().DecodeString(mac64)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.cursorMAC(gen, string(name))) {
		return 0, false
	}
	last := string(name)
	return sort.Search(len(gen.Tools), func(i int) bool { return gen.Tools[i].FQN > last }), true
}

// toolByFQN is the tool named fqn in gen, or nil.
func toolByFQN(gen *catalogue.Generation, fqn string) *call.Tool {
	i := sort.Search(len(gen.Tools), func(i int) bool { return gen.Tools[i].FQN >= fqn })
	if i < len(gen.Tools) && gen.Tools[i].FQN == fqn {
		return gen.Tools[i]
	}
	return nil
}
