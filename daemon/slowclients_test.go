package garmd_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	garmd "github.com/garm-dev/garm/daemon"
)

// These tests hold the plane with real slow clients on real connections:
// each bound is set short, and a client that never finishes must be let go
// of, or answered, before the test's own bound.

func withBounds(set func(*garmd.Config)) stackOption { return set }

// rawConn is a client that writes exactly the bytes it is told, when told.
type rawConn struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func (s *stack) dial(t *testing.T) *rawConn {
	t.Helper()
	conn, err := net.Dial("tcp", s.daemon.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(waitTimeout))
	return &rawConn{t: t, conn: conn, r: bufio.NewReader(conn)}
}

func (c *rawConn) write(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatal(err)
	}
}

// startCall writes a call's request line and headers, announcing a body of
// length bytes, and the first part of that body.
func (c *rawConn) startCall(path, token string, length int, part string) {
	c.t.Helper()
	c.write(fmt.Sprintf("POST %s HTTP/1.1\r\nHost: garm\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		path, token, length, part))
}

// answer reads one answer, within the connection's deadline.
func (c *rawConn) answer() *http.Response {
	c.t.Helper()
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		c.t.Fatalf("no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(strings.NewReader(string(body)))
	return resp
}

// closed waits until the server closes the connection, within its deadline.
func (c *rawConn) closed() {
	c.t.Helper()
	if _, err := c.r.ReadByte(); err == nil || isTimeout(err) {
		c.t.Fatalf("the connection is still open: %v", err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func bodyOf(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

const addBody = `{"a": 1, "b": 2}`

func TestABodyThatNeverFinishesIsCutAtTheBodyTimeout(t *testing.T) {
	t.Parallel()
	s := startStack(t, withBounds(func(c *garmd.Config) { c.BodyTimeout = 300 * time.Millisecond }))
	c := s.dial(t)
	c.startCall(addPath, s.token("public"), len(addBody), addBody[:5])
	resp := c.answer()
	if resp.StatusCode != http.StatusRequestTimeout ||
		bodyOf(t, resp) != `{"code":"invalid_argument","message":"The request body did not arrive in time."}` {
		t.Fatalf("%d", resp.StatusCode)
	}
	c.closed()
	eventually(t, "the slot given back", func() bool { return strings.Contains(s.metrics(), "garm_calls_in_flight 0") })
}

func TestHeadersThatNeverFinishAreCutAtTheHeaderTimeout(t *testing.T) {
	t.Parallel()
	s := startStack(t, withBounds(func(c *garmd.Config) { c.HeaderTimeout = 300 * time.Millisecond }))
	c := s.dial(t)
	c.write("POST " + addPath + " HTTP/1.1\r\nHost: garm\r\nAuthorization: Bearer ")
	c.closed()
}

func TestAnIdleConnectionIsClosedAtTheIdleTimeout(t *testing.T) {
	t.Parallel()
	s := startStack(t, withBounds(func(c *garmd.Config) { c.IdleTimeout = 300 * time.Millisecond }))
	c := s.dial(t)
	c.startCall(addPath, s.token("public"), len(addBody), addBody)
	if resp := c.answer(); resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, bodyOf(t, resp))
	}
	// Kept alive, then left idle: garmd closes it.
	c.closed()
}

func TestAHeaderBlockOverTheLimitIsRefused(t *testing.T) {
	t.Parallel()
	s := startStack(t, withBounds(func(c *garmd.Config) { c.MaxHeaderBytes = 40 << 10 }))
	c := s.dial(t)
	c.write("POST " + addPath + " HTTP/1.1\r\nHost: garm\r\nX-Padding: " + strings.Repeat("p", 64<<10) + "\r\n\r\n")
	if resp := c.answer(); resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("%d", resp.StatusCode)
	}
	// Within the limit, a token and a grant of the largest size fit.
	ans := s.post(addPath, s.token("public"), addBody, "Garm-Grant", strings.Repeat("g", 16<<10), "X-Other", strings.Repeat("o", 16<<10))
	if ans.status != http.StatusOK {
		t.Fatalf("headers within the limit: %d %s", ans.status, ans.body)
	}
}

func TestCallsOverTheInFlightBoundAreShedWithRetryAfterAndARow(t *testing.T) {
	t.Parallel()
	s := startStack(t, withBounds(func(c *garmd.Config) { c.MaxInFlight = 1 }))
	// The one slot is held by a caller still sending its body.
	holder := s.dial(t)
	holder.startCall(addPath, s.token("public"), len(addBody), addBody[:5])
	eventually(t, "the slot taken", func() bool { return strings.Contains(s.metrics(), "garm_calls_in_flight 1") })

	shed := s.post(addPath, s.token("public"), addBody)
	if shed.status != http.StatusServiceUnavailable || shed.header.Get("Retry-After") != "1" ||
		string(shed.body) != `{"code":"unavailable","message":"garm has as many calls in flight as it takes; retry shortly."}` {
		t.Fatalf("%d %v %s", shed.status, shed.header, shed.body)
	}
	if row := s.row(shed.eventID()); row.GetOutcome() != "error" || row.GetErrorKind() != "overloaded" || row.GetTool() != addPath {
		t.Fatalf("the shed call's row: %v", row)
	}
	// The holder finishes its body and is answered; the slot is free again.
	holder.write(addBody[5:])
	if resp := holder.answer(); resp.StatusCode != http.StatusOK {
		t.Fatalf("the holder: %d", resp.StatusCode)
	}
	eventually(t, "the slot given back", func() bool { return strings.Contains(s.metrics(), "garm_calls_in_flight 0") })
	if ans := s.post(addPath, s.token("public"), addBody); ans.status != http.StatusOK {
		t.Fatalf("after the holder: %d %s", ans.status, ans.body)
	}
}

func TestShutdownDoesNotWaitForACallerStillSendingItsBody(t *testing.T) {
	t.Parallel()
	// Every bound is far beyond the test's: only cutting the body lets
	// garmd stop in time.
	s := startStack(t, withBounds(func(c *garmd.Config) {
		c.BodyTimeout = 10 * time.Minute
		c.ToolTimeout = 10 * time.Minute
	}))
	c := s.dial(t)
	c.startCall(addPath, s.token("public"), len(addBody), addBody[:5])
	eventually(t, "the body being read", func() bool { return strings.Contains(s.metrics(), "garm_calls_in_flight 1") })

	s.stop()
	s.stop = nil
	resp := c.answer()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" ||
		bodyOf(t, resp) != `{"code":"unavailable","message":"garm is shutting down; retry shortly."}` {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("garmd waited for a caller still sending its body")
	}
	if strings.Contains(s.logs.String(), "still in flight when the drain ended") {
		t.Fatal("the drain ran out instead of cutting the body")
	}
}

// metrics is the admin listener's /metrics.
func (s *stack) metrics() string {
	_, body := s.admin("/metrics")
	return body
}

func TestACallerThatWillNotReadItsAnswerLosesTheConnectionAtTheRequestDeadline(t *testing.T) {
	t.Parallel()
	// The whole-request bound is body timeout + tool timeout + 5 s.
	s := startStack(t, withBounds(func(c *garmd.Config) {
		c.BodyTimeout = 100 * time.Millisecond
		c.ToolTimeout = 100 * time.Millisecond
	}))
	// A small receive window, and listings pipelined without reading a
	// byte of their answers: garmd's writes soon find nowhere to go.
	dialer := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		_ = rc.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return err
	}}
	conn, err := dialer.Dial("tcp", s.daemon.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	token := s.token("analyst")
	listing := fmt.Sprintf("POST /garm.v1.ToolCatalogService/ListTools HTTP/1.1\r\nHost: garm\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", token)
	// The client writes until garmd lets go of the connection: a write
	// that fails other than by the client's own deadline says garmd closed
	// it while the client still had not read.
	_ = conn.SetWriteDeadline(time.Now().Add(waitTimeout))
	var werr error
	for range 100_000 {
		if _, werr = io.WriteString(conn, listing); werr != nil {
			break
		}
	}
	if werr == nil || isTimeout(werr) {
		t.Fatalf("garmd still held the connection of a caller that reads nothing: %v", werr)
	}
	eventually(t, "the stuck answer let go", func() bool { return strings.Contains(s.metrics(), "garm_calls_in_flight 0") })
}

func TestTheMCPEndpointIsHeldToThePlanesBounds(t *testing.T) {
	t.Parallel()
	s := startStack(t, withBounds(func(c *garmd.Config) {
		c.MCP = true
		c.MaxInFlight = 1
		// Long enough that a loaded machine's scrape of /metrics still
		// sees the slot held: it is given back at the body timeout.
		c.BodyTimeout = 2 * time.Second
	}))
	// A body to /mcp that never finishes is let go of at the body timeout,
	// and holds the plane's one slot until then.
	c := s.dial(t)
	c.write("POST /mcp HTTP/1.1\r\nHost: " + s.daemon.Addr().String() + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"")
	eventually(t, "the slot taken", func() bool { return strings.Contains(s.metrics(), "garm_calls_in_flight 1") })
	shed := s.post(addPath, s.token("public"), addBody)
	if shed.status != http.StatusServiceUnavailable || shed.header.Get("Retry-After") != "1" {
		t.Fatalf("a call while /mcp held the slot: %d %s", shed.status, shed.body)
	}
	if resp := c.answer(); resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("/mcp's body past the deadline: %d", resp.StatusCode)
	}
	c.closed()
	eventually(t, "the slot given back", func() bool { return strings.Contains(s.metrics(), "garm_calls_in_flight 0") })

	// A full plane sheds /mcp as it sheds a tool call, with a row.
	holder := s.dial(t)
	holder.startCall(addPath, s.token("public"), len(addBody), addBody[:5])
	eventually(t, "the slot taken again", func() bool { return strings.Contains(s.metrics(), "garm_calls_in_flight 1") })
	ans := s.postRaw("/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}})
	if ans.status != http.StatusServiceUnavailable || ans.header.Get("Retry-After") != "1" {
		t.Fatalf("/mcp on a full plane: %d %s", ans.status, ans.body)
	}
	if row := s.row(ans.eventID()); row.GetErrorKind() != "overloaded" || row.GetSurface() != "mcp" {
		t.Fatalf("the shed MCP request's row: %v", row)
	}
}
