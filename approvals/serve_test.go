package approvals_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals"
	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go/jetstream"
)

func TestTheServiceRefusesToStartOnAnApprovalsBucketThatAllowsPurgeOrRollUps(t *testing.T) {
	srv := garmtooltest.StartJetStream(t)
	_, js := garmtooltest.ConnectJetStream(t, srv.URL())
	ctx := bounded(t)
	if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: pending.Bucket, Storage: jetstream.FileStorage, LimitMarkerTTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	err := approvals.Serve(ctx, approvals.ServeConfig{
		Config: approvals.Config{
			BaseURL: "http://127.0.0.1:1", KeyFile: "unread", GrantAudience: "garm",
			OIDCIssuer: "http://127.0.0.1:1", OIDCClientID: "c", SubjectClaim: "sub",
		},
		Listen: "127.0.0.1:0", Bus: garmtool.BusFlags{URL: srv.URL()},
	}, func(net.Addr) { t.Errorf("the service served on an unfenced bucket") })
	if err == nil {
		t.Fatal("the service started on an unfenced bucket")
	}
	for _, want := range []string{"not fenced", "allows roll-ups", pending.FenceCommand()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
}
