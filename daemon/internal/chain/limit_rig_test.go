package chain_test

import (
	"context"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/chain/limit"
	limitjs "github.com/garm-dev/garm/daemon/internal/chain/limit/jetstream"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// limitRate is a rate limit of count calls a day keyed on key.
func limitRate(tool, id string, count uint32, key ...toolv1.Limit_KeyPart) *planv1.LimitPlan {
	return &planv1.LimitPlan{Tool: tool, Origin: planv1.LimitOrigin_LIMIT_ORIGIN_DEPLOYMENT, Limit: &toolv1.Limit{
		Id: id, Description: "a test limit", Key: key, Cost: 1,
		Kind: &toolv1.Limit_Rate_{Rate: &toolv1.Limit_Rate{Count: count, Window: toolv1.Limit_WINDOW_DAY}},
	}}
}

// limitedCounter is a real JetStream server with garmd's counter streams,
// and a limiter counting on it.
func limitedCounter(tb testing.TB) (*limit.Limiter, jetstream.JetStream) {
	tb.Helper()
	srv := garmtooltest.StartJetStream(tb)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatal(err)
	}
	if err := limitjs.Create(context.Background(), js, 1); err != nil {
		tb.Fatal(err)
	}
	return limit.New(limit.Config{Counter: limitjs.New(js), Bound: 2 * time.Second}), js
}

// unreachableLimiter counts on a bus connection that is closed.
func unreachableLimiter(tb testing.TB, js jetstream.JetStream) *limit.Limiter {
	tb.Helper()
	srv := garmtooltest.StartJetStream(tb)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		tb.Fatal(err)
	}
	closed, _ := jetstream.New(nc)
	nc.Close()
	return limit.New(limit.Config{Counter: limitjs.New(closed), Bound: 100 * time.Millisecond})
}

// limitGoverned mounts the governed rig's catalogue again with plans as its
// effective limits, and counts them on a real bus.
func limitGoverned(tb testing.TB, r *rig, plans ...*planv1.LimitPlan) jetstream.JetStream {
	tb.Helper()
	gen, err := catalogue.Load(cataloguetest.Build(tb, "../../../examples/calculator/proto", "../../testdata/approvals/proto"), catalogue.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	gen.Catalogue.Limits = plans
	retention := time.Duration(0)
	if err := catalogue.Mount(gen, catalogue.Steps{Grants: true, Notify: true, AuditRetention: &retention, Limits: true, ToolTimeout: 5 * time.Second}); err != nil {
		tb.Fatal(err)
	}
	r.serving.Store(gen)
	var js jetstream.JetStream
	r.chain.Limits, js = limitedCounter(tb)
	return js
}
