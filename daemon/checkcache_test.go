package garmd_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	garmd "github.com/garm-dev/garm/daemon"
)

func withCheckCache(dir string) stackOption {
	return func(c *garmd.Config) { c.CheckCache = dir }
}

// fromCheckCache is the startup report's count of descriptor files built
// from the check cache.
func (s *stack) fromCheckCache() int {
	s.t.Helper()
	m := regexp.MustCompile(`"msg":"garmd: catalogue".*"files_from_check_cache":(\d+)`).FindStringSubmatch(s.logs.String())
	if m == nil {
		s.t.Fatal("the startup report does not count the files from the check cache")
	}
	var n int
	if err := json.Unmarshal([]byte(m[1]), &n); err != nil {
		s.t.Fatal(err)
	}
	return n
}

// answers are what a caller sees of a call that passes, a call protovalidate
// refuses by a field rule and one it refuses by a message rule, with the
// descriptors garmd built: the same whether they were checked at this
// start or built from the check cache.
func (s *stack) checkedAnswers() []string {
	s.t.Helper()
	var out []string
	for _, c := range []struct{ path, persona, body string }{
		{getPath, "support", `{"id": "r1"}`},
		{profilePath, "support", `{"id": "ab"}`},
		{profilePath, "reviewer", `{"id": "A-123"}`},
		{addPath, "public", `{"a": 1, "b": 2, "c": 3}`},
	} {
		ans := s.post(c.path, s.token(c.persona), c.body)
		out = append(out, fmt.Sprintf("%d %s", ans.status, ans.body))
	}
	return out
}

func TestARestartBuildsTheFilesItCheckedFromItsCheckCacheAndAnswersTheSame(t *testing.T) {
	t.Parallel()
	cache := filepath.Join(t.TempDir(), "check-cache")
	b := startBus(t)

	first := newStackOn(t, b, false, withLogLedger(), withCheckCache(cache))
	if n := first.fromCheckCache(); n != 0 {
		t.Fatalf("a first start built %d files from an empty cache", n)
	}
	if logs := first.logs.String(); !strings.Contains(logs, `"msg":"garmd: check cache recorded"`) || !regexp.MustCompile(`"validated_files":[1-9]`).MatchString(logs) {
		t.Fatal("the first start recorded nothing, or no file whose inputs' rules compiled")
	}
	want := first.checkedAnswers()
	first.shutdown()

	second := newStackOn(t, b, false, withLogLedger(), withCheckCache(cache))
	if n := second.fromCheckCache(); n == 0 {
		t.Fatal("a restart built no file from the check cache")
	}
	if strings.Contains(second.logs.String(), `check cache recorded`) {
		t.Fatal("a restart of the same catalogue wrote the record again")
	}
	if got := second.checkedAnswers(); !equalStrings(got, want) {
		t.Fatalf("answers from the check cache's descriptors:\n%q\nwant\n%q", got, want)
	}
	second.shutdown()

	// A record another deployment's key signed is not used: every file is
	// checked, and garmd says why.
	if err := os.WriteFile(filepath.Join(cache, "key"), []byte(strings.Repeat("k", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	third := newStackOn(t, b, false, withLogLedger(), withCheckCache(cache))
	if n := third.fromCheckCache(); n != 0 {
		t.Fatalf("%d files built from a record whose MAC does not verify", n)
	}
	if logs := third.logs.String(); !strings.Contains(logs, `"msg":"garmd: the check cache's record is not used; every descriptor file is checked"`) ||
		!strings.Contains(logs, "MAC does not verify") {
		t.Fatal("garmd did not say why the record was not used")
	}
	if got := third.checkedAnswers(); !equalStrings(got, want) {
		t.Fatalf("answers:\n%q\nwant\n%q", got, want)
	}
}

func TestACheckCacheOthersMayWriteIsNotUsedAndGarmdStillStarts(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	if err := os.Chmod(cache, 0o777); err != nil {
		t.Fatal(err)
	}
	s := startStack(t, withLogLedger(), withCheckCache(cache))
	if !strings.Contains(s.logs.String(), `"msg":"garmd: the check cache is not used; every descriptor file is checked"`) {
		t.Fatal("garmd did not say the cache is not used")
	}
	if _, err := os.Stat(filepath.Join(cache, "checked-files")); err == nil {
		t.Fatal("garmd recorded into a directory others may write to")
	}
	if ans := s.post(getPath, s.token("support"), `{"id": "r1"}`); ans.status != 200 {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
}

func equalStrings(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00")
}
