package garmd_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	garmd "github.com/garm-dev/garm/daemon"
)

func TestEverySeedOfANATSListIsCheckedTheSameWay(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, nats string
		want       []string // problems mentioning --nats; none when empty
	}{
		{"one URL", "nats://127.0.0.1:4222", nil},
		{"a seed list", "nats://10.0.0.1:4222,nats://10.0.0.2:4222, nats://10.0.0.3:4222", nil},
		{"a seed list with an empty entry", "nats://10.0.0.1:4222,,nats://10.0.0.2:4222,", nil},
		{"TLS seeds", "tls://a.bus:4222,tls://b.bus:4222", nil},
		{"nothing", " , ", []string{"--nats is empty"}},
		{"a bad seed", "nats://10.0.0.1:4222,http://10.0.0.2:4222", []string{"--nats seed #2 is not a nats:// or tls:// URL"}},
		{"a seed with a password", "nats://10.0.0.1:4222,nats://u:secret@10.0.0.2:4222", []string{"--nats seed #2 carries credentials"}},
		{"mixed schemes", "nats://10.0.0.1:4222,tls://10.0.0.2:4222", []string{"--nats mixes nats:// and tls://"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := garmd.DefaultConfig()
			cfg.NATS = c.nats
			var got []string
			var cerr *garmd.ConfigError
			if err := cfg.Validate(); errors.As(err, &cerr) {
				for _, p := range cerr.Problems {
					if strings.Contains(p, "--nats") {
						got = append(got, p)
					}
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("the --nats problems are %q, want %q", got, c.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], c.want[i]) {
					t.Errorf("problem %q, want one starting %q", got[i], c.want[i])
				}
				if strings.Contains(got[i], "secret") {
					t.Errorf("the problem echoes a password: %q", got[i])
				}
			}
		})
	}
}

// deadSeed is a loopback URL nothing listens on.
func deadSeed(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "nats://" + addr
}

func TestAReplicaStartsWhenAnySeedAnswers(t *testing.T) {
	down1, down2 := deadSeed(t), deadSeed(t)
	s := startStack(t, withLogLedger(), func(c *garmd.Config) { c.NATS = down1 + "," + c.NATS + "," + down2 })
	if ans := s.post(addPath, s.token("public"), `{"a": 1, "b": 2}`); ans.status != http.StatusOK {
		t.Fatalf("a call through a replica started from a seed list: %d %s", ans.status, ans.body)
	}

	// With no seed answering, it does not start, and says so.
	cfg := s.cfg
	cfg.NATS = down1 + "," + down2
	cfg.Listen, cfg.AdminListen = "127.0.0.1:0", "127.0.0.1:0"
	d, err := garmd.New(context.Background(), cfg)
	if err == nil {
		t.Fatalf("garmd started with no seed answering (%v)", d.Addr())
	}
	if !strings.Contains(err.Error(), "--nats") {
		t.Fatalf("the failure does not name --nats: %v", err)
	}
}
