package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
)

// The lifecycle methods (initialize, ping, server/discover and the
// notifications) are the official Go SDK's, once the chain has admitted
// the caller; what the SDK answers is relayed with static words and the
// request's own id.

// forward hands a lifecycle request to the SDK and answers what it
// answered, its error messages replaced by static ones and its id by the
// request's own bytes: the SDK reads an id into a value and writes it
// back, which need not be the bytes sent.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, body []byte, id json.RawMessage) {
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
		s.relay(w, id, out)
	default:
		writeError(w, id, errorForStatus(res.StatusCode))
	}
}

// relay answers the SDK's answer for a request with id: its result as it
// is, or the static words for its error's code.
func (s *Server) relay(w http.ResponseWriter, id json.RawMessage, answer []byte) {
	var a struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	switch {
	case json.Unmarshal(answer, &a) != nil:
		writeError(w, id, errInternal)
	case a.Error != nil:
		msg, ok := staticMessages[a.Error.Code]
		if !ok {
			msg = errInternal.message
		}
		writeJSON(w, http.StatusOK, errorBody(id, &rpcError{code: a.Error.Code, message: msg}))
	case len(a.Result) == 0 || a.Result[0] != '{':
		writeError(w, id, errInternal)
	default:
		writeResult(w, id, a.Result)
	}
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
