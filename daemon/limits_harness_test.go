package garmd_test

import (
	"context"
	"os"
	"testing"
	"time"

	garmd "github.com/garm-dev/garm/daemon"
	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
)

// withLimits turns on --limits, with plans as the catalogue's effective
// limits (as the build would resolve them), and creates the counter
// streams on the stack's bus as garm bus init would.
func withLimits(t testing.TB, plans ...*limitPlan) stackOption {
	return withLimitsOn(t, 1, plans...)
}

// withLimitsOn is withLimits with counter streams of replicas copies.
func withLimitsOn(t testing.TB, replicas int, plans ...*limitPlan) stackOption {
	return func(c *garmd.Config) {
		if c.Catalogue == "" {
			return // the harness's probe of the options
		}
		data, err := os.ReadFile(c.Catalogue)
		if err != nil {
			t.Fatal(err)
		}
		var cat cataloguev1.Catalogue
		if err := proto.Unmarshal(data, &cat); err != nil {
			t.Fatal(err)
		}
		cat.Limits = plans
		if data, err = (proto.MarshalOptions{Deterministic: true}).Marshal(&cat); err != nil {
			t.Fatal(err)
		}
		writeFile(t, c.Catalogue, data)
		nc, err := nats.Connect(c.NATS)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		if err := garmd.CreateLimitStreams(context.Background(), js, replicas); err != nil {
			t.Fatal(err)
		}
		c.Limits = true
		// A machine under load can take longer than the default bound.
		c.LimitBound = 2 * time.Second
	}
}

// rateLimit is a limit of count calls of tool per window, keyed on key.
func rateLimit(tool, id string, count uint32, w toolv1.Limit_Window, key ...toolv1.Limit_KeyPart) *planv1.LimitPlan {
	return &planv1.LimitPlan{Tool: tool, Origin: planv1.LimitOrigin_LIMIT_ORIGIN_DEPLOYMENT, Limit: &toolv1.Limit{
		Id: id, Description: "At most so many calls, so the tool's upstream is not drained.", Key: key, Cost: 1,
		Kind: &toolv1.Limit_Rate_{Rate: &toolv1.Limit_Rate{Count: count, Window: w}},
	}}
}

type limitPlan = planv1.LimitPlan
