package garmd_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/builder"
	garmd "github.com/garm-dev/garm/daemon"
)

// changedRecordsCatalogue is the records fixture as a service built from a
// changed proto would carry it: package fix.v1, with StallRequest.ms a
// uint64 instead of a uint32 — the one change that makes it another wire
// shape. It is derived from the fixture itself, so the two never drift.
var changedRecordsCatalogue = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "garmd-changed-records-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	const src = "testdata/records/proto/fix/v1"
	dst := filepath.Join(dir, "fix", "v1")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, err
	}
	for _, name := range []string{"records.proto", "profiles.proto"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			return nil, err
		}
		if name == "records.proto" {
			const field = "optional uint32 ms = 1;"
			if !bytes.Contains(data, []byte(field)) {
				return nil, fmt.Errorf("%s/%s no longer declares %q", src, name, field)
			}
			data = bytes.Replace(data, []byte(field), []byte("optional uint64 ms = 1;"), 1)
		}
		if err := os.WriteFile(filepath.Join(dst, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	c, err := builder.FromRoots(context.Background(), dir)
	if err != nil {
		return nil, err
	}
	return c.Bytes, nil
})

// hashOf is the fix.v1 descriptor hash of a built catalogue.
func hashOf(t *testing.T, data []byte) string {
	t.Helper()
	a, err := artifact.Read(data)
	if err != nil {
		t.Fatal(err)
	}
	return a.Catalogue.GetDescriptorHashes()["fix.v1"]
}

const quarantineSweep = 200 * time.Millisecond

// awaitStatus calls get_record as persona until it answers status, within
// a few sweeps.
func (s *stack) awaitStatus(persona string, status int) *answer {
	s.t.Helper()
	deadline := time.Now().Add(10 * quarantineSweep)
	for {
		ans := s.post(getPath, s.token(persona), `{"id": "r1"}`)
		if ans.status == status {
			return ans
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("get_record as %s still answers %d %s, not %d", persona, ans.status, ans.body, status)
		}
		time.Sleep(quarantineSweep / 4)
	}
}

func TestAServiceBuiltFromAChangedProtoIsQuarantinedUntilTheRightOneIsBack(t *testing.T) {
	garmd.ShortQuarantineSweeps(t, quarantineSweep, 150*time.Millisecond)
	s := startStack(t)
	if !strings.Contains(s.logs.String(), "nothing quarantined at start") {
		t.Errorf("the startup report does not say what is quarantined:\n%s", s.logs)
	}
	if ans := s.post(getPath, s.token("support"), `{"id": "r1"}`); ans.status != http.StatusOK {
		t.Fatalf("before: %d %s", ans.status, ans.body)
	}
	original, err := fixtureCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	want := hashOf(t, original)
	changed := hashOf(t, mustBytes(t, changedRecordsCatalogue))
	if changed == want || changed == "" {
		t.Fatalf("the changed proto's hash %q is the served one's %q", changed, want)
	}

	s.crashRecords()
	crashChanged := serveServiceOf(t, changedRecordsCatalogue, s.bus.url, "records", "fix.v1.Records", "fix.v1", recordsHandler)

	ans := s.awaitStatus("support", http.StatusServiceUnavailable)
	if string(ans.body) != `{"code":"unavailable","message":"The tool is not available right now."}` {
		t.Errorf("body %s", ans.body)
	}
	if strings.Contains(string(ans.body), changed) || strings.Contains(string(ans.body), "quarantine") {
		t.Error("the quarantine's reason reached the wire")
	}
	row := s.row(ans.eventID())
	detail := row.GetErrorDetail()
	if row.GetOutcome() != "error" || row.GetErrorKind() != "quarantined" || row.GetTool() != "fix.v1.get_record" ||
		!strings.Contains(detail, "quarantined") || !strings.Contains(detail, "fix.v1") ||
		!strings.Contains(detail, changed) || !strings.Contains(detail, want) {
		t.Errorf("row: outcome %q, kind %q, tool %q, detail %q", row.GetOutcome(), row.GetErrorKind(), row.GetTool(), detail)
	}
	if l := s.logs.String(); !strings.Contains(l, `"level":"WARN","msg":"garmd: quarantined a package`) || !strings.Contains(l, changed) {
		t.Errorf("no warning naming the package and hashes:\n%s", l)
	}

	// A caller who may not see the tool learns nothing of the quarantine.
	if ans := s.post(getPath, s.token("outsider"), `{"id": "r1"}`); ans.status != http.StatusNotFound {
		t.Errorf("outsider: %d %s", ans.status, ans.body)
	}

	crashChanged()
	s.crashRecords = startRecordsService(t, s.bus.url)
	s.awaitStatus("support", http.StatusOK)
	if !strings.Contains(s.logs.String(), "garmd: lifted a quarantine") {
		t.Error("no line on the lift")
	}
}

func mustBytes(t *testing.T, f func() ([]byte, error)) []byte {
	t.Helper()
	b, err := f()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
