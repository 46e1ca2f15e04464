package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
)

// JSON-RPC 2.0 error codes, and MCP's.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
	// codeHeaderMismatch is MCP's: the MCP-Protocol-Version header and the
	// request's _meta disagree, or one is missing (2026-07-28).
	codeHeaderMismatch = -32001
	// codeUnsupportedVersion is MCP's: a protocol version not served.
	codeUnsupportedVersion = -32004
)

// rpcError is a refusal as JSON-RPC words it. Every message is one of the
// constants below: nothing of the request is ever echoed.
type rpcError struct {
	status  int // the HTTP status it is answered with
	code    int
	message string
}

// The refusals of the gate and of the two methods served here, each a
// static sentence.
var (
	errParse           = &rpcError{http.StatusBadRequest, codeParseError, "Parse error: the body is not one JSON object."}
	errBatch           = &rpcError{http.StatusBadRequest, codeInvalidRequest, "Invalid request: batches are not supported."}
	errInvalidRequest  = &rpcError{http.StatusBadRequest, codeInvalidRequest, "Invalid request: not a JSON-RPC 2.0 request."}
	errDuplicateMember = &rpcError{http.StatusBadRequest, codeInvalidRequest, "Invalid request: a member is given more than once."}
	errMethodNotFound  = &rpcError{http.StatusOK, codeMethodNotFound, "Method not found."}
	errInvalidParams   = &rpcError{http.StatusOK, codeInvalidParams, "Invalid params."}
	errInvalidCursor   = &rpcError{http.StatusOK, codeInvalidParams, "Invalid params: the cursor is not one this server issued for the catalogue it serves."}
	// errUnknownTool answers a tool that does not exist and one the caller
	// may not see, byte for byte alike.
	errUnknownTool        = &rpcError{http.StatusOK, codeInvalidParams, "Unknown tool."}
	errInternal           = &rpcError{http.StatusOK, codeInternalError, "Internal error."}
	errTooLarge           = &rpcError{http.StatusRequestEntityTooLarge, codeInvalidRequest, "Invalid request: the body is larger than the limit."}
	errBodyCut            = &rpcError{http.StatusRequestTimeout, codeInvalidRequest, "Invalid request: the body did not arrive in time."}
	errMediaType          = &rpcError{http.StatusUnsupportedMediaType, codeInvalidRequest, "Invalid request: the body must be application/json."}
	errNotAcceptable      = &rpcError{http.StatusNotAcceptable, codeInvalidRequest, "Invalid request: Accept must name application/json and text/event-stream."}
	errUnsupportedVersion = &rpcError{http.StatusBadRequest, codeUnsupportedVersion, "Unsupported protocol version: this server speaks 2025-11-25 and 2026-07-28."}
	errHeaderMismatch     = &rpcError{http.StatusBadRequest, codeHeaderMismatch, "The MCP-Protocol-Version header does not match the request's protocol version."}
	errDuplicateHeader    = &rpcError{http.StatusBadRequest, codeInvalidRequest, "Invalid request: a security-relevant header is given more than once."}
	errMethod             = &rpcError{http.StatusMethodNotAllowed, codeInvalidRequest, "Method not allowed: this endpoint answers POST only."}
	errForbiddenOrigin    = &rpcError{http.StatusForbidden, codeInvalidRequest, "Forbidden: cross-origin requests are refused."}
	errForbiddenHost      = &rpcError{http.StatusForbidden, codeInvalidRequest, "Forbidden: this Host is not served."}
	errUnauthenticated    = &rpcError{http.StatusUnauthorized, codeInvalidRequest, "Unauthorized: a valid bearer token is required."}
	errUnavailable        = &rpcError{http.StatusServiceUnavailable, codeInternalError, "No catalogue is serving."}
)

// staticMessages are the words for the JSON-RPC codes the SDK answers with,
// replacing its own (which can quote the request).
var staticMessages = map[int]string{
	codeParseError:         errParse.message,
	codeInvalidRequest:     errInvalidRequest.message,
	codeMethodNotFound:     errMethodNotFound.message,
	codeInvalidParams:      errInvalidParams.message,
	codeInternalError:      errInternal.message,
	codeHeaderMismatch:     errHeaderMismatch.message,
	codeUnsupportedVersion: errUnsupportedVersion.message,
}

// rpcRequest is one JSON-RPC request or notification, its members read
// once each, by their exact names.
type rpcRequest struct {
	// id is the request's id exactly as sent (a string or an integer); nil
	// for a notification. Every answer carries these bytes.
	id     json.RawMessage
	method string
	// params are the members of params; nil when it is absent or null.
	params map[string]json.RawMessage
	// meta are the members of params._meta; nil when it is absent or null.
	// The one reading of _meta: the era check, the trace context and the
	// call's extras all look here.
	meta map[string]json.RawMessage
}

// maxID bounds the id echoed in an answer.
const maxID = 128

// nullID is the id of an answer to a request whose id could not be read.
var nullID = json.RawMessage("null")

// parseRequest reads body as one JSON-RPC 2.0 request. A member given twice
// is refused: a proxy that read the other copy would see another request.
func parseRequest(body []byte) (*rpcRequest, *rpcError) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return nil, errBatch
	}
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, errParse
	}
	m, err := members(trimmed)
	if err != nil {
		if errors.Is(err, errDuplicate) {
			return nil, errDuplicateMember
		}
		return nil, errParse
	}
	var version string
	if raw, ok := m["jsonrpc"]; !ok || json.Unmarshal(raw, &version) != nil || version != "2.0" {
		return nil, errInvalidRequest
	}
	req := &rpcRequest{}
	if raw, ok := m["id"]; ok {
		if !validID(raw) {
			return nil, errInvalidRequest
		}
		req.id = raw
	}
	if raw, ok := m["method"]; !ok || json.Unmarshal(raw, &req.method) != nil || req.method == "" {
		return req, errInvalidRequest
	}
	if raw, ok := m["params"]; ok && !isNull(raw) {
		if req.params, err = objectMembers(raw); err != nil {
			return req, errInvalidParams
		}
	}
	if raw, ok := req.params["_meta"]; ok && !isNull(raw) {
		if req.meta, err = objectMembers(raw); err != nil {
			return req, errInvalidParams
		}
	}
	return req, nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(raw, []byte("null")) }

// objectMembers is raw's members when raw is a JSON object; an error for
// any other value, or a member named twice.
func objectMembers(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errors.New("not an object")
	}
	return members(raw)
}

// validID accepts what JSON-RPC ids are in practice and MCP allows: a
// JSON string, or an integer in the int64 range, of at most maxID bytes.
// A fraction, an exponent or a larger integer is refused: a peer that
// reads ids as integers would answer another id than the one sent.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 || len(raw) > maxID {
		return false
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := strconv.ParseInt(string(raw), 10, 64)
		return err == nil
	}
	return false
}

var errDuplicate = errors.New("a member is given twice")

// members is a JSON object's members, refusing one named twice. object
// must be valid JSON (json.Valid); members walks it once without decoding
// the values.
func members(object []byte) (map[string]json.RawMessage, error) {
	i := skipSpace(object, 0)
	if i >= len(object) || object[i] != '{' {
		return nil, errors.New("not an object")
	}
	m := make(map[string]json.RawMessage, 4)
	i = skipSpace(object, i+1)
	if i < len(object) && object[i] == '}' {
		return m, nil
	}
	for i < len(object) {
		end := skipString(object, i)
		if end < 0 {
			return nil, errors.New("malformed member name")
		}
		var key string
		if bytes.IndexByte(object[i:end], '\\') >= 0 {
			if err := json.Unmarshal(object[i:end], &key); err != nil {
				return nil, err
			}
		} else {
			key = string(object[i+1 : end-1])
		}
		i = skipSpace(object, end)
		if i >= len(object) || object[i] != ':' {
			return nil, errors.New("malformed member")
		}
		start := skipSpace(object, i+1)
		stop := skipValue(object, start)
		if stop < 0 {
			return nil, errors.New("malformed value")
		}
		if _, seen := m[key]; seen {
			return nil, errDuplicate
		}
		m[key] = object[start:stop]
		i = skipSpace(object, stop)
		if i < len(object) && object[i] == ',' {
			i = skipSpace(object, i+1)
			continue
		}
		if i < len(object) && object[i] == '}' {
			return m, nil
		}
		return nil, errors.New("malformed object")
	}
	return nil, errors.New("unterminated object")
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString is the index after the string starting at i, or -1.
func skipString(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue is the index after the (valid) JSON value starting at i, or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end := skipString(b, i)
				if end < 0 {
					return -1
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
	}
	return i
}

// writeError answers e for a request with id (nil: null).
func writeError(w http.ResponseWriter, id json.RawMessage, e *rpcError) {
	writeJSON(w, e.status, errorBody(id, e))
}

// errorBody is the JSON-RPC answer carrying e for a request with id.
func errorBody(id json.RawMessage, e *rpcError) []byte {
	if id == nil {
		id = nullID
	}
	msg, _ := json.Marshal(e.message)
	body := make([]byte, 0, 96+len(id)+len(msg))
	body = append(body, `{"jsonrpc":"2.0","id":`...)
	body = append(body, id...)
	body = append(body, `,"error":{"code":`...)
	body = strconv.AppendInt(body, int64(e.code), 10)
	body = append(body, `,"message":`...)
	body = append(body, msg...)
	return append(body, `}}`...)
}

// writeResult answers result (a JSON object) for a request with id.
func writeResult(w http.ResponseWriter, id json.RawMessage, result []byte) {
	body := make([]byte, 0, 40+len(id)+len(result))
	body = append(body, `{"jsonrpc":"2.0","id":`...)
	body = append(body, id...)
	body = append(body, `,"result":`...)
	body = append(body, result...)
	body = append(body, '}')
	writeJSON(w, http.StatusOK, body)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
