package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"time"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// maxBody is the largest body the bridge reads, garmd's own ceiling.
const maxBody = 16 << 20

// runBridge serves the bridge: what any HTTP front end of a NATS tool must
// do and nothing more. The route names the subject, the body goes to the
// tool as it came (binary protobuf), with the invocation context a tool
// requires (a fresh call id and the deadline); the tool's answer is the
// response. No identity, no policy, no ledger.
func runBridge(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("benche2e bridge", flag.ContinueOnError)
	natsURL := fs.String("nats", "", "the bus `url`")
	listen := fs.String("listen", "127.0.0.1:0", "the loopback `address` to serve")
	timeout := fs.Duration("timeout", 5*time.Second, "each call's deadline")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkLoopback(*listen); err != nil {
		return err
	}
	nc, err := nats.Connect(*natsURL, nats.Name("benche2e-bridge"))
	if err != nil {
		return err
	}
	defer nc.Close()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: bridgeHandler(nc, *timeout), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func bridgeHandler(nc *nats.Conn, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, "body not read", http.StatusBadRequest)
			return
		}
		deadline := time.Now().Add(timeout)
		inv, err := wire.EncodeInvocation(benchInvocation(deadline))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		ctx, cancel := context.WithDeadline(r.Context(), deadline)
		defer cancel()
		reply, err := nc.RequestMsgWithContext(ctx, &nats.Msg{
			Subject: wire.Subject(r.URL.Path),
			Data:    body,
			Header:  nats.Header{wire.InvocationHeader: []string{inv}},
		})
		switch {
		case errors.Is(err, nats.ErrNoResponders):
			http.Error(w, "no responders", http.StatusServiceUnavailable)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusGatewayTimeout)
			return
		case reply.Header.Get(wire.ErrorCodeHeader) != "":
			http.Error(w, reply.Header.Get(wire.ErrorHeader), http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/proto")
		_, _ = w.Write(reply.Data)
	})
}

// benchInvocation is the invocation context of one call that neither the
// bridge nor the direct caller governs: the least a tool accepts.
func benchInvocation(deadline time.Time) *toolv1.InvocationContext {
	var id [12]byte
	_, _ = rand.Read(id[:]) // never fails (crypto/rand)
	return &toolv1.InvocationContext{
		Attribution: &toolv1.CallContext{Tenant: benchTenant},
		Principal:   &toolv1.InvocationPrincipal{Subject: benchSubject, Kind: toolv1.PrincipalKind_PRINCIPAL_KIND_USER},
		Deadline:    timestamppb.New(deadline),
		CallId:      "bench-" + hex.EncodeToString(id[:]),
	}
}
