package natsperm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/catalogue-builder/natsperm"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// jetStreamConfServer starts a JetStream nats-server whose users are
// garmd and the approvals service, with the derived permissions, and an
// operator with every right who creates the bucket.
func jetStreamConfServer(t *testing.T, set *natsperm.Set) string {
	t.Helper()
	dir := t.TempDir()
	var perms bytes.Buffer
	if err := natsperm.WriteConf(&perms, set); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "garm-permissions.conf"), perms.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	users := ""
	for _, id := range set.Identities {
		users += fmt.Sprintf("    { user = %q, password = %q, permissions = $%s }\n", id.Name, "pw-"+id.Name, natsperm.PermissionVariable(id.Name))
	}
	conf := fmt.Sprintf(`listen = "127.0.0.1:-1"
jetstream { store_dir = %q }
include "garm-permissions.conf"
authorization {
  default_permissions = $%s
  users = [
%s    { user = "operator", password = "pw-operator", permissions = { publish = ">", subscribe = ">" } }
  ]
}
`, filepath.Join(dir, "js"), natsperm.EveryoneElseVariable, users)
	return serveConf(t, dir, conf)
}

func jetStreamAs(t *testing.T, url, user string) jetstream.JetStream {
	t.Helper()
	c := connectAs(t, url, user, nats.CustomInboxPrefix(natsperm.InboxPrefix(user)))
	js, err := jetstream.New(c.Conn)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func within(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestGarmdAsksAndOnlyTheApprovalsServiceDecides(t *testing.T) {
	set := natsperm.Derive(buildRoots(t, calculatorRoot).Artifact)
	set.Identities = append(set.Identities[:1:1], natsperm.Approvals())
	url := jetStreamConfServer(t, set)
	operator := connectAs(t, url, "operator")
	opJS, err := jetstream.New(operator.Conn)
	if err != nil {
		t.Fatal(err)
	}
	watcher, err := pending.Ensure(within(t, waitFor), opJS, 1)
	if err != nil {
		t.Fatal(err)
	}

	garmd, err := pending.Open(within(t, waitFor), jetStreamAs(t, url, natsperm.GarmdUser))
	if err != nil {
		t.Fatalf("garmd cannot bind the bucket: %v", err)
	}
	approvals, err := pending.Open(within(t, waitFor), jetStreamAs(t, url, natsperm.ApprovalsUser))
	if err != nil {
		t.Fatalf("the approvals service cannot bind the bucket: %v", err)
	}
	ask := pending.Request{Tool: "bank.v1.pay", Subject: "user:p", Tenant: "acme", MaxGrantAgeSeconds: 300, Material: map[string]string{"amount": "1"}}
	r, err := garmd.Ask(within(t, waitFor), ask)
	if err != nil {
		t.Fatalf("garmd cannot record a request: %v", err)
	}
	if again, err := garmd.Ask(within(t, waitFor), ask); err != nil || again.ID != r.ID {
		t.Fatalf("garmd cannot reuse its request: %v", err)
	}

	t.Run("garmd cannot write a decision", func(t *testing.T) {
		err := garmd.Decide(within(t, 2*time.Second), pending.Decision{ID: r.ID, Verdict: pending.Approved, Approver: "user:garmd", Grant: "forged"})
		if err == nil {
			t.Fatal("garmd recorded a decision")
		}
		if _, d, err := watcher.Get(within(t, waitFor), r.ID); err != nil || d != nil {
			t.Fatalf("after garmd's attempt the request reads %v, decision %+v", err, d)
		}
	})
	t.Run("the approvals service cannot create a request", func(t *testing.T) {
		if _, err := approvals.Ask(within(t, 2*time.Second), pending.Request{Tool: "bank.v1.pay", Subject: "user:q", MaxGrantAgeSeconds: 60}); err == nil {
			t.Fatal("the approvals service recorded a request")
		}
		open, err := watcher.Open(within(t, waitFor), 0)
		if err != nil || len(open) != 1 || open[0].ID != r.ID {
			t.Fatalf("after the approvals service's attempt the bucket holds %v (%v)", open, err)
		}
	})
	t.Run("the approvals service lists the request and decides it, and garmd reads the decision", func(t *testing.T) {
		open, err := approvals.Open(within(t, waitFor), 10)
		if err != nil || len(open) != 1 || open[0].ID != r.ID {
			t.Fatalf("the inbox: %v %v", open, err)
		}
		if err := approvals.Decide(within(t, waitFor), pending.Decision{ID: r.ID, Verdict: pending.Approved, Approver: "user:a", Grant: "g"}); err != nil {
			t.Fatalf("the approvals service cannot decide: %v", err)
		}
		if _, d, err := garmd.Get(within(t, waitFor), r.ID); err != nil || d == nil || d.Grant != "g" {
			t.Fatalf("garmd reads %+v, %v", d, err)
		}
		if err := approvals.Decide(within(t, waitFor), pending.Decision{ID: r.ID, Verdict: pending.Denied, Approver: "user:a"}); !errors.Is(err, pending.ErrDecided) {
			t.Fatalf("a second decision: %v", err)
		}
	})
	t.Run("neither can purge or delete the bucket", func(t *testing.T) {
		for _, js := range []jetstream.JetStream{jetStreamAs(t, url, natsperm.GarmdUser), jetStreamAs(t, url, natsperm.ApprovalsUser)} {
			if err := js.DeleteKeyValue(within(t, 2*time.Second), pending.Bucket); err == nil {
				t.Fatal("the bucket was deleted")
			}
		}
		if _, _, err := watcher.Get(within(t, waitFor), r.ID); err != nil {
			t.Fatalf("the request is gone: %v", err)
		}
	})
}
