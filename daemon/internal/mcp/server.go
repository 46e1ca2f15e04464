package mcp

import (
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
	"net/url"
	"strings"
	"time"

	"github.com/garm-dev/garm/daemon/internal/chain"
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
	// Chain answers every request that is one JSON-RPC request: it
	// authenticates, decides, lists and records. The endpoint reads
	// nothing of it but Run's answers, and its Tracer for the span it
	// lends.
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
	// Nothing this endpoint answers is for a shared cache: every answer
	// is the caller's own.
	w.Header()["Cache-Control"] = cacheControl
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
	// (decision 0032), and of the protocol version. A header that cannot
	// be read once is the chain's to refuse and record, as on the HTTP
	// route.
	var headers chain.Request
	toolplane.ReadHeaders(r.Header, &headers)
	if headers.HeaderFault == "" && len(r.Header.Values("Mcp-Protocol-Version")) > 1 {
		headers.HeaderFault = "Mcp-Protocol-Version was sent more than once"
	}
	if headers.HeaderFault != "" {
		creq := s.chainRequest(&headers, era{})
		creq.HeaderFault = headers.HeaderFault
		s.refuse(w, nil, s.chain.Run(chain.Detach(r.Context()), creq), errDuplicateHeader)
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

	// What is not one JSON-RPC request in a revision served is refused
	// with a static error before anyone is asked who the caller is: it
	// is no call, and its words tell nothing of what is served. Every
	// request that is one goes to the chain exactly once.
	req, rerr := parseRequest(body)
	if rerr != nil {
		writeError(w, idOf(req), rerr)
		return
	}
	e, rerr := eraOf(req, version)
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
		ctx, span := s.startSpan(r.Context(), tracing.NameMCPList, version, headers.Traceparent, headers.Tracestate, start)
		defer span.End(tracing.Result{})
		s.listTools(ctx, w, &headers, req, e)
	case "tools/call":
		if req.id == nil {
			writeError(w, nil, errInvalidRequest)
			return
		}
		tp, ts := callTrace(r.Header, &headers, req.meta)
		ctx, span := s.startSpan(r.Context(), tracing.NameMCPCall, version, tp, ts, start)
		defer span.End(tracing.Result{})
		s.callTool(ctx, w, r.Header, &headers, req, e)
	case "initialize", "ping", "server/discover", "notifications/initialized", "notifications/cancelled":
		if s.admit(w, r, &headers, req, e) {
			s.forward(w, r, body, req.id)
		}
	default:
		if !s.admit(w, r, &headers, req, e) {
			return
		}
		if req.id == nil {
			w.WriteHeader(http.StatusAccepted) // a notification this server has no use for
			return
		}
		writeError(w, req.id, errMethodNotFound)
	}
}

// cacheControl is every answer's Cache-Control, the plane's.
var cacheControl = []string{toolplane.CacheControl}

// chainRequest is the chain request of an MCP request: what every one
// carries, whatever its method.
func (s *Server) chainRequest(headers *chain.Request, e era) *chain.Request {
	return &chain.Request{
		HTTPMethod:    http.MethodPost,
		Path:          Path,
		Authorization: headers.Authorization,
		JSON:          true,
		Surface:       chain.SurfaceMCP,
		ClientName:    e.clientName,
	}
}

// admit asks the chain whether the caller of a method answered without a
// call (the lifecycle, a method not served) is admitted; false when it
// was not, and was answered.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, headers *chain.Request, req *rpcRequest, e era) bool {
	creq := s.chainRequest(headers, e)
	creq.Admit = true
	resp := s.chain.Run(chain.Detach(r.Context()), creq)
	if resp.Code == "" {
		return true
	}
	s.refuse(w, req.id, resp, errInternal)
	return false
}

// refuse answers a refusal of the chain to a request that is not a call,
// dressed as JSON-RPC: the endpoint's 401 with the pointer to the resource
// metadata, the 503 of no catalogue, and otherwise fallback.
func (s *Server) refuse(w http.ResponseWriter, id json.RawMessage, resp *chain.Response, fallback *rpcError) {
	rowHeaders(w, resp)
	switch resp.Code {
	case codeUnauthenticated:
		w.Header().Set("Www-Authenticate", s.challenge)
		writeError(w, id, errUnauthenticated)
	case codeUnavailable:
		writeError(w, id, errUnavailable)
	case codeInternal:
		writeError(w, id, errInternal)
	default:
		writeError(w, id, fallback)
	}
}

// rowHeaders names the chain's row and generation, as the HTTP route does.
func rowHeaders(w http.ResponseWriter, resp *chain.Response) {
	if resp.EventID != "" {
		w.Header()[toolplane.EventIDHeader] = []string{resp.EventID}
	}
	if resp.Digest != "" {
		w.Header()[toolplane.DigestHeader] = []string{resp.Digest}
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

// eraOf reads the era from the header and from _meta's members, by their
// exact names.
func eraOf(req *rpcRequest, header string) (era, *rpcError) {
	if req.params == nil && header != VersionStateless {
		return era{}, nil
	}
	var metaVersion string
	if raw, ok := req.meta[metaProtocolVersion]; ok && json.Unmarshal(raw, &metaVersion) != nil {
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
	if raw, ok := req.meta[metaClientInfo]; ok {
		info, err := objectMembers(raw)
		if err != nil {
			return era{}, errInvalidParams
		}
		if name, ok := info["name"]; ok && json.Unmarshal(name, &e.clientName) != nil {
			return era{}, errInvalidParams
		}
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

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
