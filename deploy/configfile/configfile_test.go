package configfile_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/deploy/configfile"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }
func (l *list) Values() []string   { return *l }

type settings struct {
	addr, keyFile string
	n             int
	names         list
}

func flags(s *settings) *flag.FlagSet {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	fs.StringVar(&s.addr, "addr", "default:1", "")
	fs.StringVar(&s.keyFile, "key-file", "", "")
	fs.IntVar(&s.n, "n", 1, "")
	fs.Var(&s.names, "name", "")
	return fs
}

func file(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAFlagWinsOverTheEnvironmentWhichWinsOverTheFile(t *testing.T) {
	t.Parallel()
	var s settings
	path := file(t, "addr: file:2\nkey-file: /file/key\nn: 3\nname: [a, b]\n")
	env := map[string]string{"KEY_FILE": "key-file"}
	getenv := func(name string) string {
		if name == "KEY_FILE" {
			return "/env/key"
		}
		return ""
	}
	problems, err := configfile.Parse(flags(&s), []string{"--config", path, "--name", "c"}, env, getenv)
	if err != nil || problems != nil {
		t.Fatalf("%v %v", err, problems)
	}
	if s.addr != "file:2" || s.keyFile != "/env/key" || s.n != 3 || strings.Join(s.names, ",") != "c" {
		t.Fatalf("got %+v", s)
	}
}

func TestEveryProblemOfAFileIsReportedWithItsLine(t *testing.T) {
	t.Parallel()
	var s settings
	path := file(t, "adr: x\nn: lots\nname: {x: y}\naddr: [x]\nn: 2\n")
	problems, err := configfile.Parse(flags(&s), []string{"--config", path}, nil, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`:1: unknown key "adr"`, ":2: n: parse error", ":3: name is a list or a plain value", ":4: addr is a plain value", `:5: "n" is given twice`}
	if len(problems) != len(want) {
		t.Fatalf("%d problems, want %d:\n%s", len(problems), len(want), strings.Join(problems, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(problems[i], w) {
			t.Errorf("problem %d %q lacks %q", i, problems[i], w)
		}
	}
}

func TestURLCredentialsAreElided(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"nats://127.0.0.1:4222":                 "nats://127.0.0.1:4222",
		"nats://u:p@h:1":                        "nats://REDACTED@h:1",
		"nats://token@h:1,nats://h2:1":          "nats://REDACTED@h:1,nats://h2:1",
		"/path/with@sign":                       "/path/with@sign",
		"nats://u:p%zz@h:1":                     "REDACTED",
		"https://user:secret@example.com/x?y=1": "https://REDACTED@example.com/x?y=1",
	} {
		if got := configfile.ElideURLCredentials(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
