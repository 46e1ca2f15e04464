package toolplane

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/codec"
	"github.com/garm-dev/garm/daemon/internal/deny"
)

// MaxBody is the largest request body garmd reads (SPEC 7.3).
const MaxBody = 16 << 20

// Headers garmd reads and writes.
const (
	EventIDHeader       = "Garm-Event-Id"
	DigestHeader        = "Garm-Catalogue-Digest"
	TimeoutHeader       = "Garm-Timeout-Ms"
	CorrelationIDHeader = "Garm-Correlation-Id"
	GrantHeader         = "Garm-Grant"
)

// Handler serves the tool plane through ch.
func Handler(ch *chain.Chain) http.Handler {
	return &handler{chain: ch}
}

type handler struct {
	chain *chain.Chain
}

var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bufp := bodyBuffers.Get().(*[]byte)
	defer func() {
		if cap(*bufp) <= 1<<20 {
			*bufp = (*bufp)[:0]
			bodyBuffers.Put(bufp)
		}
	}()
	body, err := readBody(r, (*bufp)[:0])
	if err != nil {
		if errors.Is(err, errTooLarge) {
			status, b := deny.Wire(deny.Deny(deny.BodyTooLarge, ""))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write(b)
			return
		}
		// A body that could not be read is the caller's: its connection
		// failed mid-body. Nobody is left to answer.
		return
	}
	*bufp = body
	resp := h.chain.Run(context.WithoutCancel(r.Context()), &chain.Request{
		HTTPMethod:    r.Method,
		Path:          r.URL.Path,
		Authorization: r.Header.Get("Authorization"),
		JSON:          codec.IsJSON(r.Header.Get("Content-Type")),
		Body:          body,
		TimeoutMs:     r.Header.Get(TimeoutHeader),
		Traceparent:   r.Header.Get("Traceparent"),
		Tracestate:    r.Header.Get("Tracestate"),
		CorrelationID: r.Header.Get(CorrelationIDHeader),
		Grant:         r.Header.Get(GrantHeader),
		Surface:       chain.SurfaceHTTP,
	})
	hdr := w.Header()
	hdr["Content-Type"] = []string{resp.ContentType}
	if resp.EventID != "" {
		hdr[EventIDHeader] = []string{resp.EventID}
	}
	if resp.Digest != "" {
		hdr[DigestHeader] = []string{resp.Digest}
	}
	if resp.Challenge {
		hdr["Www-Authenticate"] = []string{"Bearer"}
	}
	if resp.AllowPOST {
		hdr["Allow"] = []string{http.MethodPost}
	}
	hdr["Content-Length"] = []string{strconv.Itoa(len(resp.Body))}
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}

var errTooLarge = errors.New("body too large")

// readBody reads the whole body into buf, refusing one over MaxBody without
// reading past the limit.
func readBody(r *http.Request, buf []byte) ([]byte, error) {
	if r.ContentLength > MaxBody {
		return nil, errTooLarge
	}
	if r.Body == nil || r.Body == http.NoBody {
		return buf, nil
	}
	lr := io.LimitedReader{R: r.Body, N: MaxBody + 1}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > MaxBody {
			return nil, errTooLarge
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
