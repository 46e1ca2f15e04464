package mcp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/daemon/internal/approval"
	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/deny"
)

// A call refused for want of an approval grant, with a request open for a
// human, whose client declares URL-mode elicitation (elicitation.url in
// _meta's clientCapabilities), is answered in the shape its revision has
// for "a person must act first" (docs/decisions/0052):
//
//	2026-07-28   input_required: a URL-mode elicitation of the request's
//	             page, and a requestState the retry echoes
//	2025-11-25   -32042 URL elicitation required
//
// A client that declares none cannot answer either: it gets the isError
// result, whose body names the page.
const (
	// metaApproval carries an approval request's id, as Garm-Approval does.
	metaApproval = "dev.garm/approval"
	// metaClientCapabilities is where a call declares what its client can
	// do; a stateless server cannot remember what initialize said.
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	// approvalInput is the key of the one input request garmd makes.
	approvalInput = "garm_approval"
	// codeURLElicitationRequired is MCP's (2025-11-25).
	codeURLElicitationRequired = -32042
	// maxRequestState bounds a requestState read.
	maxRequestState = 4 << 10
	// stateVersion is the version of the requestState format.
	stateVersion = 1
)

// elicitMessage is what the client shows with the page's URL.
const elicitMessage = "A person must approve this call. Open the page to review it; once it is decided, the call is retried."

// MinApprovalStateKey is the shortest requestState key accepted, in bytes.
const MinApprovalStateKey = 32

// errApprovalRefused is the static refusal of a requestState that does not
// verify, has expired or is another caller's: the same as an approval id
// that names no approved request of the caller's.
var errApprovalRefused = deny.ApprovalRefused

// stateClaims is what a requestState binds.
type stateClaims struct {
	V      int      `json:"v"`
	Sub    string   `json:"sub"`
	Tenant string   `json:"ten"`
	Act    []string `json:"act"`
	Tool   string   `json:"tool"`
	Digest string   `json:"md"`
	ID     string   `json:"id"`
	Exp    int64    `json:"exp"`
}

// sealState is the requestState of p's open request a: its claims, then
// an HMAC-SHA256 over them under the server's state key, each base64url.
func (s *Server) sealState(p *call.Principal, a *approval.Asked) string {
	holder := chain.HolderOf(p)
	payload, _ := json.Marshal(stateClaims{
		V: stateVersion, Sub: holder.Subject, Tenant: holder.Tenant, Act: holder.Act,
		Tool: a.Tool, Digest: a.MaterialDigest, ID: a.ID, Exp: a.Expires.Unix(),
	})
	body := base64.RawURLEncoding.EncodeToString(payload)
	return body + "." + base64.RawURLEncoding.EncodeToString(s.stateMAC(body))
}

func (s *Server) stateMAC(body string) []byte {
	mac := hmac.New(sha256.New, s.stateKey)
	mac.Write([]byte(body))
	return mac.Sum(nil)
}

// openState verifies raw as a requestState this server sealed for a call
// to tool name, unexpired at now; the error is for the ledger only. Whose
// it is, is the chain's to check (chain.Request.ApprovalHolder): the
// caller is not known until the chain has authenticated it.
func (s *Server) openState(raw string, name string, now time.Time) (stateClaims, error) {
	if s.stateKey == nil {
		return stateClaims{}, errors.New("a requestState was presented and this server issues none")
	}
	if len(raw) > maxRequestState {
		return stateClaims{}, errors.New("the requestState is too long")
	}
	body, sig, ok := strings.Cut(raw, ".")
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(mac, s.stateMAC(body)) {
		return stateClaims{}, errors.New("the requestState does not verify")
	}
	payload, err := base64.RawURLEncoding.DecodeString(body)
	var c stateClaims
	if err != nil || json.Unmarshal(payload, &c) != nil || c.V != stateVersion {
		return stateClaims{}, errors.New("the requestState verifies but does not decode")
	}
	switch {
	case now.Unix() >= c.Exp:
		return stateClaims{}, errors.New("the requestState of approval request " + c.ID + " has expired")
	case c.Tool != name:
		return stateClaims{}, errors.New("the requestState of approval request " + c.ID + " is for another tool")
	case !pending.ValidID(c.ID):
		return stateClaims{}, errors.New("the requestState names a malformed approval id")
	}
	return c, nil
}

// askHuman answers a call refused for want of a grant whose approval
// request is open, in its revision's shape; false when the revision has
// none for this client, and the ordinary result answers it.
func (s *Server) askHuman(w http.ResponseWriter, id json.RawMessage, resp *chain.Response, e era, meta map[string]json.RawMessage) bool {
	a, p := resp.Approval, resp.Principal
	if a == nil || p == nil || !declaresURLElicitation(meta) {
		return false
	}
	elicit := map[string]any{"mode": "url", "message": elicitMessage, "url": a.URL, "elicitationId": a.ID}
	switch {
	case e.stateless && s.stateKey != nil:
		out, _ := json.Marshal(map[string]any{
			"inputRequests": map[string]any{approvalInput: map[string]any{"method": "elicitation/create", "params": elicit}},
			"requestState":  s.sealState(p, a),
			"resultType":    "input_required",
			"_meta": map[string]any{
				metaEventID: resp.EventID, metaCatalogueDigest: resp.Digest,
				metaServerInfo: json.RawMessage(s.serverInfo),
			},
		})
		writeResult(w, id, out)
		return true
	case !e.stateless:
		data, _ := json.Marshal(map[string]any{"elicitations": []any{elicit}})
		msg, _ := json.Marshal("URL elicitation required: a person must approve this call.")
		if id == nil {
			id = nullID
		}
		body := []byte(`{"jsonrpc":"2.0","id":`)
		body = append(body, id...)
		body = append(body, `,"error":{"code":`...)
		body = strconv.AppendInt(body, codeURLElicitationRequired, 10)
		body = append(body, `,"message":`...)
		body = append(body, msg...)
		body = append(body, `,"data":`...)
		body = append(body, data...)
		body = append(body, `}}`...)
		writeJSON(w, http.StatusOK, body)
		return true
	}
	return false
}

// declaresURLElicitation reports whether the call's _meta declares that
// its client takes URL-mode elicitation.
func declaresURLElicitation(meta map[string]json.RawMessage) bool {
	raw, ok := meta[metaClientCapabilities]
	if !ok {
		return false
	}
	var caps struct {
		Elicitation *struct {
			URL *json.RawMessage `json:"url"`
		} `json:"elicitation"`
	}
	return json.Unmarshal(raw, &caps) == nil && caps.Elicitation != nil && caps.Elicitation.URL != nil
}
