package natsperm_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/catalogue-builder/natsperm"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestTheApprovalsIdentityCreatesNoConsumerYetListsItsInbox(t *testing.T) {
	set := natsperm.Derive(buildRoots(t, calculatorRoot).Artifact)
	set.Identities = append(set.Identities[:1:1], natsperm.Approvals())
	url := jetStreamConfServer(t, set)
	operator := connectAs(t, url, "operator")
	opJS, err := jetstream.New(operator.Conn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pending.Ensure(within(t, waitFor), opJS, 1); err != nil {
		t.Fatal(err)
	}
	garmd, err := pending.Open(within(t, waitFor), jetStreamAs(t, url, natsperm.GarmdUser))
	if err != nil {
		t.Fatal(err)
	}
	r, err := garmd.Ask(within(t, waitFor), pending.Request{Tool: "bank.v1.pay", Subject: "user:p", Tenant: "acme", MaxGrantAgeSeconds: 300, Material: map[string]string{"amount": "1"}})
	if err != nil {
		t.Fatalf("garmd cannot record a request and its inbox key: %v", err)
	}

	approvals := connectAs(t, url, natsperm.ApprovalsUser, nats.CustomInboxPrefix(natsperm.InboxPrefix(natsperm.ApprovalsUser)))
	stream := "KV_" + pending.Bucket
	// A push consumer delivering the bucket to a tool's subject, an
	// ephemeral one without bound, a durable one, and one on another
	// stream: each is a consumer API call the server must refuse.
	for _, c := range []struct{ subject, config string }{
		{"$JS.API.CONSUMER.CREATE." + stream, `{"stream_name":"` + stream + `","config":{"deliver_subject":"calc.v1.Calculator.Add","ack_policy":"none"}}`},
		{"$JS.API.CONSUMER.CREATE." + stream, `{"stream_name":"` + stream + `","config":{"ack_policy":"none"}}`},
		{"$JS.API.CONSUMER.CREATE." + stream + ".hoard.$KV." + pending.Bucket + ".>", `{"stream_name":"` + stream + `","config":{"name":"hoard","durable_name":"hoard","filter_subject":"$KV.` + pending.Bucket + `.>","ack_policy":"explicit"}}`},
		{"$JS.API.CONSUMER.DURABLE.CREATE." + stream + ".hoard", `{"stream_name":"` + stream + `","config":{"durable_name":"hoard","ack_policy":"explicit"}}`},
		{"$JS.API.CONSUMER.CREATE.GARM_AUDIT", `{"stream_name":"GARM_AUDIT","config":{"deliver_subject":"_INBOX.approvals.x","ack_policy":"none"}}`},
	} {
		if _, err := approvals.Request(c.subject, []byte(c.config), 2*time.Second); err == nil {
			t.Errorf("the server answered a consumer creation on %s", c.subject)
		}
		approvals.refused(t, c.subject)
	}
	ajs, err := jetstream.New(approvals.Conn)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := ajs.KeyValue(within(t, waitFor), pending.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.ListKeys(within(t, 2*time.Second)); err == nil {
		t.Error("the approvals identity watched the bucket, which takes a consumer")
	}
	info, err := opJS.Stream(within(t, waitFor), stream)
	if err != nil {
		t.Fatal(err)
	}
	if n := info.CachedInfo().State.Consumers; n != 0 {
		t.Errorf("the bucket has %d consumers after the approvals identity's attempts", n)
	}

	store, err := pending.Open(within(t, waitFor), jetStreamAs(t, url, natsperm.ApprovalsUser))
	if err != nil {
		t.Fatal(err)
	}
	page, err := store.Inbox(within(t, waitFor), "acme", "", 10, func(pending.Request) bool { return true })
	if err != nil || len(page.Requests) != 1 || page.Requests[0].ID != r.ID {
		t.Fatalf("the approvals identity's inbox: %v, %s", err, fmt.Sprint(page.Requests))
	}
}
