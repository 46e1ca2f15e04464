package garmd_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
)

func TestACatalogueFromS3GainsAToolWithinAPollWithoutARestart(t *testing.T) {
	store := startCatalogueStore(t)
	s := startStack(t, withS3Catalogue(store, fixtureCatalogue, shortPoll))
	startGreeter(t, s.bus.url)
	if !strings.Contains(s.logs.String(), "polled every 200ms at "+catalogueURL+" (ETag), and on "+wire.CataloguePublishedSubject) {
		t.Errorf("the startup report does not say how the catalogue is refreshed:\n%s", s.logs)
	}
	if ans := s.post(greetPath, s.token("public"), `{"name": "Ada"}`); ans.status != http.StatusNotFound {
		t.Fatalf("Greet before it is published: %d %s", ans.status, ans.body)
	}

	published := time.Now()
	digest := store.publish(must(t, grownCatalogue))
	var ans *answer
	eventually(t, "Greet becoming callable", func() bool {
		ans = s.post(greetPath, s.token("public"), `{"name": "Ada"}`)
		return ans.status != http.StatusNotFound
	})
	// One poll, and the time a poll's HEAD, GET, load and mount take.
	if took := time.Since(published); took > shortPoll+2*time.Second {
		t.Errorf("the new tool took %s to be served, polling every %s", took, shortPoll)
	}
	if ans.status != http.StatusOK || string(ans.body) != `{"greeting":"hello, Ada"}` {
		t.Fatalf("Greet: %d %s", ans.status, ans.body)
	}
	if got := ans.header.Get("Garm-Catalogue-Digest"); got != digest {
		t.Errorf("answered by %s, want %s", got, digest)
	}
	if row := s.row(ans.eventID()); row.GetCatalogueDigest() != digest || row.GetOutcome() != "ok" {
		t.Errorf("row %v", row)
	}
	if n := s.logLines(`"msg":"garmd: catalogue reloaded"`); n != 1 || !strings.Contains(s.logs.String(), `"new_digest":"`+digest+`"`) {
		t.Errorf("%d reload lines:\n%s", n, s.logs)
	}
	if status, body := s.admin("/metrics"); status != http.StatusOK || !strings.Contains(body, `digest="`+digest+`"`) {
		t.Errorf("the metrics do not name the new generation: %d", status)
	}
}

func TestARefusedCatalogueLeavesTheOldOneServingAndIsLoggedOnce(t *testing.T) {
	for name, data := range map[string]func() ([]byte, error){
		// A MODE_GRANT tool while grants are off.
		"does not mount": governedCatalogue,
		"garbage bytes":  func() ([]byte, error) { return []byte("these bytes are not a catalogue"), nil },
	} {
		t.Run(name, func(t *testing.T) {
			store := startCatalogueStore(t)
			polls := store.countPolls(t)
			s := startStack(t, withS3Catalogue(store, fixtureCatalogue, shortPoll))
			serving := artifact.Digest(must(t, fixtureCatalogue))
			refused := store.publish(must(t, data))
			const line = `"msg":"garmd: catalogue refused; the serving generation stays"`
			eventually(t, "the refusal", func() bool { return s.logLines(line) > 0 })
			after := polls.Load()
			eventually(t, "five more polls of the same refused ETag", func() bool { return polls.Load() >= after+5 })
			if n := s.logLines(line); n != 1 {
				t.Errorf("the refusal was logged %d times, want once:\n%s", n, s.logs)
			}
			if !strings.Contains(s.logs.String(), `"serving_digest":"`+serving+`"`) || !strings.Contains(s.logs.String(), `"refused_digest":"`+refused+`"`) {
				t.Errorf("the refusal does not name the serving and refused digests:\n%s", s.logs)
			}
			ans := s.post(addPath, s.token("public"), `{"a": 1, "b": 2}`)
			if ans.status != http.StatusOK || ans.header.Get("Garm-Catalogue-Digest") != serving {
				t.Errorf("after the refusal: %d %s by %s", ans.status, ans.body, ans.header.Get("Garm-Catalogue-Digest"))
			}
		})
	}
}

func TestAStoreThatStopsLeavesTheCatalogueServingWithAWarning(t *testing.T) {
	store := startCatalogueStore(t)
	s := startStack(t, withS3Catalogue(store, fixtureCatalogue, shortPoll))
	serving := artifact.Digest(must(t, fixtureCatalogue))
	store.srv.Stop()
	eventually(t, "the warning", func() bool {
		return strings.Contains(s.logs.String(), `"level":"WARN","msg":"garmd: the catalogue's store cannot be reached`)
	})
	for range 3 {
		ans := s.post(addPath, s.token("public"), `{"a": 1, "b": 2}`)
		if ans.status != http.StatusOK || ans.header.Get("Garm-Catalogue-Digest") != serving {
			t.Fatalf("with the store stopped: %d %s", ans.status, ans.body)
		}
	}
	if status, body := s.admin("/readyz"); status != http.StatusOK {
		t.Errorf("readiness with the store stopped: %d %s", status, body)
	}
}

func TestAnAnnouncementOnTheBusReloadsBeforeTheNextPoll(t *testing.T) {
	store := startCatalogueStore(t)
	s := startStack(t, withS3Catalogue(store, fixtureCatalogue, time.Hour))
	startGreeter(t, s.bus.url)
	digest := store.publish(must(t, grownCatalogue))

	nc, err := nats.Connect(s.bus.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// The payload is ignored: a hint, never a source.
	if err := nc.Publish(wire.CataloguePublishedSubject, []byte("s3://elsewhere/not-this-one")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	var ans *answer
	eventually(t, "the announced catalogue serving", func() bool {
		ans = s.post(greetPath, s.token("public"), `{"name": "Ada"}`)
		return ans.status == http.StatusOK
	})
	if got := ans.header.Get("Garm-Catalogue-Digest"); got != digest {
		t.Errorf("answered by %s, want %s", got, digest)
	}
}
