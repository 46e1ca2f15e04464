package mcp

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/chain"
	rowstep "github.com/garm-dev/garm/daemon/internal/chain/ledger"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/toolplane"
	"github.com/garm-dev/garm/daemon/internal/tracing"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Path is where the endpoint is served on the tool plane.
const Path = "/mcp"

// MetadataPath is RFC 9728's well-known location of the protected resource
// metadata; it is also served suffixed with the resource's path.
const MetadataPath = "/.well-known/oauth-protected-resource"

// The protocol revisions served (docs/decisions/0037).
const (
	// VersionHandshake is the era with the initialize handshake.
	VersionHandshake = "2025-11-25"
	// VersionStateless is the era with per-request _meta and resultType.
	VersionStateless = "2026-07-28"
)

// DefaultPageSize is how many tools a tools/list page holds.
const DefaultPageSize = 500

// MinCursorKey is the shortest cursor key accepted, in bytes.
const MinCursorKey = 16

// Config is what a Server needs; every field is required unless it says
// otherwise.
type Config struct {
	// Chain runs every tools/call, and lends its Authenticator, Lister,
	// Serving and Recorder to the rest.
	Chain *chain.Chain
	// Resource is the endpoint's canonical URL (RFC 8707): what the
	// metadata names, and the audience a token may carry instead of the
	// plane's own.
	Resource string
	// AuthorizationServers are the trusted token issuers, as the metadata
	// lists them.
	AuthorizationServers []string
	// CursorKey signs tools/list cursors. Replicas that share it accept
	// each other's cursors.
	CursorKey []byte
	// PageSize is how many tools a page holds; 0 means DefaultPageSize.
	PageSize int
	// ApprovalStateKey protects the requestState of an input_required
	// answer (HMAC-SHA256); replicas that share it accept each other's. nil
	// answers a call waiting for a human with the isError result only.
	ApprovalStateKey []byte
	// Version is garmd's, in serverInfo.
	Version string
	// Logger receives what the SDK logs; nil discards.
	Logger *slog.Logger
}

// Server is the MCP endpoint and its metadata. It holds no state between
// requests: any replica answers any request.
type Server struct {
	chain       *chain.Chain
	resource    *url.URL
	metadataURL string
	challenge   string
	cursorKey   []byte
	// stateKey signs requestState; nil without one configured.
	stateKey   []byte
	pageSize   int
	serverInfo json.RawMessage
	origins    *http.CrossOriginProtection
	lifecycle  http.Handler
	metadata   http.Handler
	tools      *toolCache
}

// New is a Server for cfg, or an error naming every problem with it.
func New(cfg Config) (*Server, error) {
	var problems []string
	if cfg.Chain == nil {
		problems = append(problems, "mcp: no chain")
	}
	u, err := url.Parse(cfg.Resource)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" || u.RawQuery != "" {
		problems = append(problems, fmt.Sprintf("mcp: the resource %q is not an absolute http(s) URL without query or fragment", cfg.Resource))
	}
	if len(cfg.CursorKey) < MinCursorKey {
		problems = append(problems, fmt.Sprintf("mcp: the cursor key is %d bytes; at least %d are required", len(cfg.CursorKey), MinCursorKey))
	}
	if cfg.ApprovalStateKey != nil && len(cfg.ApprovalStateKey) < MinApprovalStateKey {
		problems = append(problems, fmt.Sprintf("mcp: the approval state key is %d bytes; at least %d are required", len(cfg.ApprovalStateKey), MinApprovalStateKey))
	}
	if cfg.PageSize < 0 {
		problems = append(problems, "mcp: a negative page size")
	}
	if len(problems) > 0 {
		return nil, &deny.Misconfigured{Problems: problems}
	}
	if cfg.PageSize == 0 {
		cfg.PageSize = DefaultPageSize
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	impl := &sdk.Implementation{Name: "garmd", Title: "garm governed tool plane", Version: cfg.Version}
	info, _ := json.Marshal(impl)
	s := &Server{
		chain:      cfg.Chain,
		resource:   u,
		cursorKey:  deriveKey(cfg.CursorKey, "garm mcp tools/list cursor v1"),
		stateKey:   stateKeyOf(cfg.ApprovalStateKey),
		pageSize:   cfg.PageSize,
		serverInfo: info,
		origins:    http.NewCrossOriginProtection(),
		tools:      newToolCache(),
	}
	s.metadataURL = metadataURL(u)
	s.challenge = fmt.Sprintf("Bearer resource_metadata=%q", s.metadataURL)

	lifecycle := sdk.NewServer(impl, &sdk.ServerOptions{
		Logger:                    logger,
		Capabilities:              &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
		SupportedProtocolVersions: []string{VersionStateless, VersionHandshake},
		// Nothing this endpoint answers is the same for every caller.
		SetCacheable: func(_ context.Context, _ sdk.Request, c *sdk.Cacheable) { c.CacheScope = "private" },
		Instructions: "Tools are listed per caller: what you see is what you may call. " +
			"A tool that needs a human's approval answers grant_required with the fields the approver must see.",
	})
	s.lifecycle = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return lifecycle }, &sdk.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		Logger:       logger,
		// The gate has checked the Host and the Origin, and read the body
		// within the limit, before the SDK sees the request.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        toolplane.MaxBody,
	})
	s.metadata = auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               u.String(),
		AuthorizationServers:   append([]string{}, cfg.AuthorizationServers...),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "garmd",
	})
	return s, nil
}

// metadataURL is where RFC 9728 says a client finds the metadata of
// resource: the well-known path with the resource's path appended.
func metadataURL(resource *url.URL) string {
	m := *resource
	m.Path = MetadataPath + strings.TrimSuffix(resource.Path, "/")
	m.RawPath = ""
	return m.String()
}

// deriveKey is a key for one purpose from a shared secret.
func deriveKey(secret []byte, purpose string) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(purpose))
	return mac.Sum(nil)
}

// stateKeyOf is the requestState key derived from the configured one, or
// nil without one.
func stateKeyOf(secret []byte) []byte {
	if secret == nil {
		return nil
	}
	return deriveKey(secret, "garm mcp requestState v1")
}

// Owns reports whether the request target is the endpoint's or its
// metadata's, compared on the escaped path as sent.
func (s *Server) Owns(r *http.Request) bool {
	p := r.URL.EscapedPath()
	return p == Path || p == MetadataPath || p == MetadataPath+strings.TrimSuffix(s.resource.EscapedPath(), "/")
}

// ServeHTTP answers the endpoint and its metadata.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.EscapedPath() != Path {
		s.metadata.ServeHTTP(w, r)
		return
	}
	s.serveMCP(w, r)
}

func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, nil, errMethod)
		return
	}
	if s.origins.Check(r) != nil {
		writeError(w, nil, errForbiddenOrigin)
		return
	}
	if !s.hostServed(r) {
		writeError(w, nil, errForbiddenHost)
		return
	}
	// One reading of every security-relevant header, the tool plane's
	// (decision 0032), and of the protocol version.
	var headers chain.Request
	toolplane.ReadHeaders(r.Header, &headers)
	if headers.HeaderFault != "" || len(r.Header.Values("Mcp-Protocol-Version")) > 1 {
		writeError(w, nil, errDuplicateHeader)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeError(w, nil, errMediaType)
		return
	}
	if !accepts(r.Header.Values("Accept")) {
		writeError(w, nil, errNotAcceptable)
		return
	}
	version := r.Header.Get("Mcp-Protocol-Version")
	if version != "" && version != VersionHandshake && version != VersionStateless {
		writeError(w, nil, errUnsupportedVersion)
		return
	}
	body, err := readBody(r)
	if err != nil {
		switch {
		case errors.Is(err, errBodyTooLarge):
			writeError(w, nil, errTooLarge)
		case isTimeout(err):
			// The plane's body deadline, or its cut at shutdown.
			w.Header().Set("Connection", "close")
			writeError(w, nil, errBodyCut)
		}
		return // the caller's connection failed mid-body: nobody to answer
	}

	gen := s.chain.Serving.Load()
	if gen == nil {
		s.recordRefusal(start, nil, nil, "", deny.Fail(deny.NoCatalogue, "no_catalogue", "no catalogue generation is serving"))
		writeError(w, nil, errUnavailable)
		return
	}
	authorization := r.Header.Get("Authorization")
	authStart := time.Now()
	p, cacheHit, err := s.chain.Authn.AuthenticateCached(r.Context(), authorization, gen)
	gate := gateAuth{start: authStart, end: time.Now(), cacheHit: cacheHit, err: err}
	if err != nil {
		s.traceRefusal(r.Context(), &headers, version, start, gate, s.recordRefusal(start, gen, nil, "", err), gen, err)
		w.Header().Set("Www-Authenticate", s.challenge)
		writeError(w, nil, errUnauthenticated)
		return
	}

	req, rerr := parseRequest(body)
	if rerr != nil {
		writeError(w, idOf(req), rerr)
		return
	}
	era, rerr := eraOf(req, version)
	if rerr != nil {
		writeError(w, req.id, rerr)
		return
	}
	switch req.method {
	case "tools/list":
		if req.id == nil {
			writeError(w, nil, errInvalidRequest)
			return
		}
		_, span := s.startSpan(r.Context(), tracing.NameMCPList, version, headers.Traceparent, headers.Tracestate, start, gate)
		finishList(span, s.listTools(w, gen, p, req, era), gen)
	case "tools/call":
		if req.id == nil {
			writeError(w, nil, errInvalidRequest)
			return
		}
		if s.chain.Tracer != nil {
			tp, ts := callTrace(r.Header, &headers, req.params)
			ctx, span := s.startSpan(r.Context(), tracing.NameMCPCall, version, tp, ts, start, gate)
			// Ends the span once answered; what it records is for a call
			// refused before the chain ran (its parameters).
			defer span.End(invalidParams(gen))
			r = r.WithContext(tracing.Lend(ctx, span))
		}
		s.callTool(w, r, &headers, start, gen, p, req, era)
	case "initialize", "ping", "server/discover", "notifications/initialized", "notifications/cancelled":
		s.forward(w, r, body)
	default:
		if req.id == nil {
			w.WriteHeader(http.StatusAccepted) // a notification this server has no use for
			return
		}
		writeError(w, req.id, errMethodNotFound)
	}
}

func idOf(req *rpcRequest) json.RawMessage {
	if req == nil {
		return nil
	}
	return req.id
}

// era says which revision a request speaks, checking that its
// MCP-Protocol-Version header and its _meta agree (2026-07-28 carries both).
type era struct {
	stateless  bool
	clientName string
}

const (
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo      = "io.modelcontextprotocol/clientInfo"
	metaServerInfo      = "io.modelcontextprotocol/serverInfo"
)

func eraOf(req *rpcRequest, header string) (era, *rpcError) {
	if req.params == nil && header != VersionStateless {
		return era{}, nil
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if req.params != nil && json.Unmarshal(req.params, &p) != nil {
		return era{}, errInvalidParams
	}
	var metaVersion string
	if raw, ok := p.Meta[metaProtocolVersion]; ok && json.Unmarshal(raw, &metaVersion) != nil {
		return era{}, errInvalidParams
	}
	if req.id == nil || (metaVersion == "" && header != VersionStateless) {
		return era{}, nil
	}
	switch {
	case header == "":
		return era{}, errHeaderMismatch
	case metaVersion == "":
		return era{}, errInvalidParams
	case metaVersion != header:
		return era{}, errHeaderMismatch
	}
	e := era{stateless: true}
	if raw, ok := p.Meta[metaClientInfo]; ok {
		var info struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &info) != nil {
			return era{}, errInvalidParams
		}
		e.clientName = info.Name
	}
	return e, nil
}

// hostServed refuses DNS rebinding: a request that reached a loopback
// listener naming a Host that is neither loopback nor the resource's.
func (s *Server) hostServed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !isLoopbackAddr(local.String()) {
		return true
	}
	return isLoopbackAddr(r.Host) || strings.EqualFold(r.Host, s.resource.Host)
}

func isLoopbackAddr(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// accepts is Streamable HTTP's rule: the client takes JSON and event
// streams (wildcards count).
func accepts(values []string) bool {
	jsonOK, streamOK := false, false
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

var errBodyTooLarge = errors.New("body too large")

// readBody reads the whole body, refusing one over toolplane.MaxBody
// without reading past the limit.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > toolplane.MaxBody {
		return nil, errBodyTooLarge
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, toolplane.MaxBody+1))
	if err != nil {
		return nil, err
	}
	if len(body) > toolplane.MaxBody {
		return nil, errBodyTooLarge
	}
	return body, nil
}

// recordRefusal writes the row of a request refused before the chain ran:
// one row, as the HTTP route writes for the same refusal.
func (s *Server) recordRefusal(start time.Time, gen *catalogue.Generation, p *call.Principal, clientName string, err error) string {
	id := rowstep.NewEventID(start)
	row := rowstep.Open(id, start, Path, s.chain.Version)
	rowstep.Surface(row, chain.SurfaceMCP, clientName)
	if gen != nil {
		row.CatalogueDigest = gen.Digest
	}
	if p != nil {
		rowstep.Principal(row, p)
	}
	latency := time.Since(start)
	rowstep.Finish(row, err, latency)
	s.chain.Recorder.Record(row)
	if s.chain.Observe != nil {
		s.chain.Observe(context.Background(), "", deny.Outcome(err), deny.WireCode(err), latency)
	}
	return id
}

// forward hands a lifecycle request to the SDK and answers what it
// answered, its error messages replaced by static ones.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	rec := httptest.NewRecorder()
	s.lifecycle.ServeHTTP(rec, r)
	res := rec.Result()
	out := rec.Body.Bytes()
	switch {
	case res.StatusCode == http.StatusAccepted:
		w.WriteHeader(http.StatusAccepted)
	case res.StatusCode == http.StatusOK && strings.HasPrefix(res.Header.Get("Content-Type"), "application/json"):
		writeJSON(w, http.StatusOK, sanitise(out))
	default:
		writeError(w, nil, errorForStatus(res.StatusCode))
	}
}

// sanitise replaces the message and data of a JSON-RPC error answer by the
// static words for its code; a result passes unchanged.
func sanitise(answer []byte) []byte {
	var a struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(answer, &a) != nil {
		return errorBody(nil, errInternal)
	}
	if a.Error == nil {
		return answer
	}
	msg, ok := staticMessages[a.Error.Code]
	if !ok {
		msg = errInternal.message
	}
	return errorBody(a.ID, &rpcError{code: a.Error.Code, message: msg})
}

func errorForStatus(status int) *rpcError {
	switch status {
	case http.StatusMethodNotAllowed:
		return errMethod
	case http.StatusRequestEntityTooLarge:
		return errTooLarge
	case http.StatusUnsupportedMediaType:
		return errMediaType
	case http.StatusBadRequest, http.StatusNotFound:
		return errInvalidRequest
	}
	return errInternal
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
