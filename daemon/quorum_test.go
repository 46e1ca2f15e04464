package garmd_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	garmd "github.com/garm-dev/garm/daemon"
	"github.com/garm-dev/garm/devkit/idp"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go/jetstream"
)

// clusterWait bounds waits on a cluster losing or regaining quorum, which
// takes elections of a few seconds.
const clusterWait = 45 * time.Second

// createR3Streams creates every stream and the bucket garmd uses, with
// three replicas, as an operator of a three-node cluster would.
func createR3Streams(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clusterWait)
	defer cancel()
	for _, cfg := range []jetstream.StreamConfig{
		{Name: "GARM_LEDGER", Subjects: []string{"garm.v1.ledger.>"}},
		{Name: "GARM_AUDIT", Subjects: []string{"garm.v1.audit.>"}, Discard: jetstream.DiscardNew},
		{Name: "GARM_NOTIFY", Subjects: []string{"garm.v1.notify.>"}},
	} {
		cfg.Storage, cfg.Replicas = jetstream.FileStorage, 3
		if _, err := js.CreateStream(ctx, cfg); err != nil {
			t.Fatalf("creating %s: %v", cfg.Name, err)
		}
	}
	if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "GARM_GRANTS_SPENT", TTL: spentTTL, Storage: jetstream.FileStorage, Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	if err := garmd.FenceGrantsBucket(ctx, js); err != nil {
		t.Fatal(err)
	}
}

// readyz is /readyz's status and body.
func readyz(t *testing.T, adminURL string) (int, string) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(adminURL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func waitReadyz(t *testing.T, adminURL, what string, cond func(status int, body string) bool) {
	t.Helper()
	deadline := time.Now().Add(clusterWait)
	for {
		status, body := readyz(t, adminURL)
		if cond(status, body) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within %s; /readyz answers %d %q", what, clusterWait, status, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestReadinessSaysDegradedWhileJetStreamHasLostQuorumForTheStreamsToolsNeed(t *testing.T) {
	cluster := garmtooltest.StartCluster(t, "garm", 3)
	_, js := garmtooltest.ConnectJetStream(t, cluster.URLs())
	createR3Streams(t, js)

	personas, err := idp.LoadPersonas("testdata/personas.yaml")
	if err != nil {
		t.Fatal(err)
	}
	provider, err := idp.New(personas, idp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	idpSrv, err := provider.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idpSrv.Close() })
	data, err := governedCatalogue()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := garmd.DefaultConfig()
	cfg.Catalogue = filepath.Join(dir, "catalogue.binpb")
	writeFile(t, cfg.Catalogue, data)
	cfg.HashKeyFile = filepath.Join(dir, "hash.key")
	writeFile(t, cfg.HashKeyFile, []byte("a test hash key of more than sixteen bytes\n"))
	// Connected first to the node that will survive.
	cfg.NATS = cluster.Nodes[0].URL()
	cfg.Listen, cfg.AdminListen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Issuers, cfg.JWKS = []string{provider.Issuer()}, []string{idpSrv.JWKSURL()}
	cfg.LedgerStream = true
	cfg.MinReplicas = 3
	logs := &logBuffer{}
	cfg.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	withGovernance()(&cfg)

	ctx, cancel := context.WithCancel(context.Background())
	d, err := garmd.New(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(clusterWait):
			t.Error("garmd did not stop")
		}
	})
	admin := "http://" + d.AdminAddr().String()
	waitReadyz(t, admin, "readiness", func(status int, body string) bool { return status == http.StatusOK && body == "ready" })

	// Two of three nodes down: no stream has a quorum. garmd is still
	// connected, so it is ready, and it says what it cannot do.
	cluster.Nodes[1].Stop()
	cluster.Nodes[2].Stop()
	waitReadyz(t, admin, "readiness saying degraded", func(status int, body string) bool {
		return status == http.StatusOK && strings.HasPrefix(body, "degraded: ") &&
			strings.Contains(body, "GARM_AUDIT") && strings.Contains(body, "KV_GARM_GRANTS_SPENT") && strings.Contains(body, "GARM_LEDGER")
	})
	if !strings.Contains(logs.String(), "JetStream has no quorum for streams mounted tools need") {
		t.Errorf("the loss of quorum is not in the log:\n%s", logs.String())
	}
	// The gauge counts the streams /readyz names (every stream the mounted
	// tools need: at least the three above).
	if m := scrape(t, admin); !regexp.MustCompile(`\ngarm_jetstream_quorum_lost [3-9]\n`).MatchString(m) || !strings.Contains(m, "\ngarm_ready 1\n") {
		t.Errorf("while the streams have no quorum, garm_jetstream_quorum_lost is not at least 3 or garm_ready not 1:\n%s", m)
	}

	// The nodes come back: quorum returns, and so does plain readiness.
	for _, n := range cluster.Nodes[1:] {
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
	}
	waitReadyz(t, admin, "readiness without degradation", func(status int, body string) bool { return status == http.StatusOK && body == "ready" })
	if m := scrape(t, admin); !strings.Contains(m, "\ngarm_jetstream_quorum_lost 0\n") {
		t.Errorf("with quorum back, garm_jetstream_quorum_lost is not 0:\n%s", m)
	}
}

// scrape is the admin listener's /metrics.
func scrape(t *testing.T, adminURL string) string {
	t.Helper()
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(adminURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}
