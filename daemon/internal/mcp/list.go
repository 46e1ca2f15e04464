package mcp

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/chain"
)

// listTools answers tools/list: a page of the caller's own listing for
// audience AGENT, which the chain authenticates and the lister decides, as
// for ListTools. Like a successful ListTools it writes no ledger row; a
// refusal, a forged cursor included, writes one.
func (s *Server) listTools(ctx context.Context, w http.ResponseWriter, headers *chain.Request, req *rpcRequest, e era) {
	creq := s.chainRequest(headers, e)
	pr := &chain.PageRequest{Size: s.pageSize}
	creq.Page = pr
	fallback := errInvalidParams
	if raw, ok := req.params["cursor"]; ok && !isNull(raw) {
		var cursor string
		if json.Unmarshal(raw, &cursor) != nil {
			creq.ArgumentFault = "the cursor is not a string"
		} else {
			fallback = errInvalidCursor
			pr.Resume = func(gen *catalogue.Generation) (string, error) { return s.resume(gen, cursor) }
		}
	}
	resp := s.chain.Run(chain.Detach(ctx), creq)
	if resp.Code != "" || resp.Page == nil {
		s.refuse(w, req.id, resp, fallback)
		return
	}
	gen, entries := resp.Page.Generation, resp.Page.Entries
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
		tj, err := s.tools.of(gen, en)
		if err != nil {
			writeError(w, req.id, errInternal)
			return
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, tj.before...)
		out = append(out, en.InputSchema...)
		out = append(out, tj.after...)
	}
	out = append(out, ']')
	if resp.Page.More && len(entries) > 0 {
		out = append(out, `,"nextCursor":`...)
		out = appendString(out, s.cursor(gen, entries[len(entries)-1].Tool.FQN))
	}
	// Each caller has a list of its own: no one else may be served it
	// from a cache (the SDK's default scope is public).
	out = append(out, `,"ttlMs":0,"cacheScope":"private"`...)
	out = s.appendListMeta(out, e, gen)
	out = append(out, "}}"...)
	rowHeaders(w, resp)
	writeJSON(w, http.StatusOK, out)
}

// appendListMeta adds a listing's _meta: the catalogue generation that
// answered — its digest, and its signed version when garmd verifies
// signatures (--catalogue-keys) — so a client sees which policy listed its
// tools; and, in a 2026-07-28 result, resultType and the server's identity.
func (s *Server) appendListMeta(out []byte, e era, gen *catalogue.Generation) []byte {
	if e.stateless {
		out = append(out, `,"resultType":"complete"`...)
	}
	out = append(out, `,"_meta":{"`+metaCatalogueDigest+`":`...)
	out = appendString(out, gen.Digest)
	if gen.Signed != nil {
		out = append(out, `,"`+metaCatalogueVersion+`":`...)
		out = strconv.AppendUint(out, gen.Signed.Version, 10)
	}
	if e.stateless {
		out = append(out, `,"`+metaServerInfo+`":`...)
		out = append(out, s.serverInfo...)
	}
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

// resume is the FQN of the last tool a cursor's page showed; an error,
// for the row, when the cursor is not one this server issued for gen.
func (s *Server) resume(gen *catalogue.Generation, cursor string) (string, error) {
	name64, mac64, ok := strings.Cut(cursor, ".")
	if !ok || len(cursor) > 1024 {
		return "", errors.New("the cursor is not one this server issues")
	}
	name, err1 := base64.RawURLEncoding.Strict().DecodeString(name64)
	mac, err2 := base64.RawURLEncoding.Strict().DecodeString(mac64)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.cursorMAC(gen, string(name))) {
		return "", errors.New("the cursor was not issued for the serving generation")
	}
	return string(name), nil
}
