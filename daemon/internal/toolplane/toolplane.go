package toolplane

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/deny"
)

// MaxBody is the largest request body garmd reads (design 7.3).
const MaxBody = 16 << 20

// Defaults of Limits' zero values.
const (
	DefaultBodyTimeout = 30 * time.Second
	DefaultMaxInFlight = 1024
)

// Limits bound what callers can hold of the plane.
type Limits struct {
	// BodyTimeout bounds reading one request's body, from the moment the
	// handler starts reading it. 0 means DefaultBodyTimeout.
	BodyTimeout time.Duration
	// MaxInFlight bounds the calls being read or run at once; a call over
	// it is shed: 503 with Retry-After, and a row. 0 means
	// DefaultMaxInFlight.
	MaxInFlight int
}

// Plane serves the tool plane through a chain.
type Plane struct {
	chain       *chain.Chain
	bodyTimeout time.Duration
	// slots holds one token per call in flight.
	slots chan struct{}

	mu sync.Mutex
	// reading holds the calls whose body is still being read; stopped is
	// set once StopReading cut them.
	reading map[*http.ResponseController]struct{}
	stopped bool
}

// New is a Plane serving ch within l.
func New(ch *chain.Chain, l Limits) *Plane {
	if l.BodyTimeout <= 0 {
		l.BodyTimeout = DefaultBodyTimeout
	}
	if l.MaxInFlight <= 0 {
		l.MaxInFlight = DefaultMaxInFlight
	}
	return &Plane{
		chain:       ch,
		bodyTimeout: l.BodyTimeout,
		slots:       make(chan struct{}, l.MaxInFlight),
		reading:     make(map[*http.ResponseController]struct{}),
	}
}

// InFlight is how many calls are being read or run.
func (p *Plane) InFlight() int { return len(p.slots) }

// StopReading cuts every body still being read, and any that starts after:
// shutdown waits for calls in flight, never for a caller still sending.
// Such a caller is answered 503 (shutting down) if it is still there.
func (p *Plane) StopReading() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	for rc := range p.reading {
		_ = rc.SetReadDeadline(time.Now())
	}
}

var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func (p *Plane) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := &chain.Request{HTTPMethod: r.Method, Path: r.URL.EscapedPath(), Surface: chain.SurfaceHTTP}
	select {
	case p.slots <- struct{}{}:
	default:
		// Shed before the body is read: a full plane holds no more
		// bodies.
		req.Overloaded = true
		writeResponse(w, p.chain.Run(chain.Detach(r.Context()), req))
		return
	}
	defer func() { <-p.slots }()

	bufp := bodyBuffers.Get().(*[]byte)
	defer func() {
		if cap(*bufp) <= 1<<20 {
			*bufp = (*bufp)[:0]
			bodyBuffers.Put(bufp)
		}
	}()
	body, err := p.readBodyWithin(w, r, (*bufp)[:0])
	if err != nil {
		p.refuseBody(w, r, err)
		return
	}
	*bufp = body
	req.Body = body
	ReadHeaders(r.Header, req)
	writeResponse(w, p.chain.Run(chain.Detach(r.Context()), req))
}

// errCut is a body StopReading cut.
var errCut = errors.New("the body was cut at shutdown")

// readBodyWithin reads the body within the body timeout, as a call
// StopReading can cut.
func (p *Plane) readBodyWithin(w http.ResponseWriter, r *http.Request, buf []byte) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return buf, nil
	}
	rc := http.NewResponseController(w)
	if !p.startReading(rc) {
		return nil, errCut
	}
	body, err := readBody(r, buf)
	if err := p.finishReading(rc, err); err != nil {
		return nil, err
	}
	return body, nil
}

// startReading registers a body about to be read, with its deadline; false
// when StopReading has already cut every body.
func (p *Plane) startReading(rc *http.ResponseController) bool {
	p.mu.Lock()
	stopped := p.stopped
	if !stopped {
		p.reading[rc] = struct{}{}
	}
	p.mu.Unlock()
	if stopped {
		return false
	}
	_ = rc.SetReadDeadline(time.Now().Add(p.bodyTimeout))
	return true
}

// finishReading ends a body's reading, which ended with err (nil when the
// body is in whole), and says why it failed: errCut when StopReading cut it.
func (p *Plane) finishReading(rc *http.ResponseController, err error) error {
	p.mu.Lock()
	delete(p.reading, rc)
	stopped := p.stopped
	p.mu.Unlock()
	if err != nil {
		// The deadline stays passed: the server must not wait for the
		// rest of a body it will not read before closing the connection.
		_ = rc.SetReadDeadline(time.Now())
		if stopped {
			return errCut
		}
		return err
	}
	// The connection's own timeouts govern it again once the body is in.
	_ = rc.SetReadDeadline(time.Time{})
	return nil
}

// Guard holds another surface served on the plane's listener (MCP) to the
// tool routes' bounds: it takes one of the in-flight slots or sheds the
// request — 503 with Retry-After, and a row recording surface — and bounds
// the reading of its body by the body timeout, cut at shutdown.
func (p *Plane) Guard(surface string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case p.slots <- struct{}{}:
		default:
			req := &chain.Request{HTTPMethod: r.Method, Path: r.URL.EscapedPath(), Surface: surface, Overloaded: true}
			writeResponse(w, p.chain.Run(chain.Detach(r.Context()), req))
			return
		}
		defer func() { <-p.slots }()
		if r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			if !p.startReading(rc) {
				p.refuseBody(w, r, errCut)
				return
			}
			body := &guardedBody{ReadCloser: r.Body, finish: func(err error) { _ = p.finishReading(rc, err) }}
			defer body.end()
			r.Body = body
		}
		next.ServeHTTP(w, r)
	})
}

// guardedBody tells the plane when its reading ends: at its end, at its
// first error, or when the handler returns without reading it whole.
type guardedBody struct {
	io.ReadCloser
	finish func(error)
	done   bool
}

func (b *guardedBody) Read(buf []byte) (int, error) {
	n, err := b.ReadCloser.Read(buf)
	if err != nil && !b.done {
		b.done = true
		if err == io.EOF {
			b.finish(nil)
		} else {
			b.finish(err)
		}
	}
	return n, err
}

func (b *guardedBody) end() {
	if !b.done {
		b.done = true
		b.finish(errors.New("the handler did not read the body whole"))
	}
}

// refuseBody answers a body that was not read whole: no ledger row, since
// the ledger records calls that passed the size check, and none of these
// did. A caller whose connection failed mid-body is gone: nobody is left
// to answer.
func (p *Plane) refuseBody(w http.ResponseWriter, r *http.Request, err error) {
	var refusal error
	switch {
	case errors.Is(err, errTooLarge):
		refusal = deny.Deny(deny.BodyTooLarge, "")
	case errors.Is(err, errCut):
		refusal = deny.Fail(deny.ShuttingDown, "shutting_down", "")
		w.Header()["Retry-After"] = []string{"1"}
	case isTimeout(err):
		refusal = deny.Deny(deny.BodyTimeout, "")
	default:
		return
	}
	status, b := deny.Wire(refusal)
	hdr := w.Header()
	hdr["Content-Type"] = []string{"application/json"}
	hdr["Cache-Control"] = cacheControl
	if r.ProtoMajor == 1 {
		// HTTP/2 closes the stream, not the connection, and has no such header.
		hdr["Connection"] = []string{"close"}
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// CacheControl is the Cache-Control of every answer of the plane: each is
// the caller's own (a listing, a tool's redacted answer, where an approval
// request stands) or a refusal of the caller's request, and none is for a
// shared cache, or for keeping.
const CacheControl = "private, no-store"

var cacheControl = []string{CacheControl}

func writeResponse(w http.ResponseWriter, resp *chain.Response) {
	hdr := w.Header()
	hdr["Content-Type"] = []string{resp.ContentType}
	hdr["Cache-Control"] = cacheControl
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
	if resp.RetryAfter {
		hdr["Retry-After"] = []string{"1"}
	}
	if l := resp.Limit; l != nil {
		after := strconv.FormatInt(l.RetryAfterSeconds(), 10)
		hdr["Retry-After"] = []string{after}
		hdr["Ratelimit-Limit"] = []string{strconv.FormatUint(uint64(l.Count), 10)}
		hdr["Ratelimit-Remaining"] = []string{strconv.FormatUint(uint64(l.Remaining), 10)}
		hdr["Ratelimit-Reset"] = []string{after}
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
