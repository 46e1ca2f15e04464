package garmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/signature"
	garmd "github.com/garm-dev/garm/daemon"
)

func TestASignedCatalogueServesAndNamesItsVersionAndSigners(t *testing.T) {
	t.Parallel()
	keys := newSigningKeys(t)
	owner, security := newSigner(t, signature.AlgEdDSA), newSigner(t, signature.AlgES256)
	keys.publishKeys(groupOf{owner, "owners"}, groupOf{security, "security"})
	data := must(t, fixtureCatalogue)
	s := startStack(t, withSignedFileCatalogue(t, keys, data, sign(t, data, 7, owner, security)), func(c *garmd.Config) {
		c.CatalogueMinSigners = 2
		c.CatalogueMinPerGroup = garmd.GroupMinimums{"owners": 1, "security": 1}
	})
	digest := artifact.Digest(data)
	if got := s.servingDigest(); got != digest {
		t.Fatalf("serving %s, want %s", got, digest)
	}
	status, body := s.admin("/readyz")
	for _, want := range []string{"ready\n", "catalogue " + signedName + " version 7", digest, owner.KeyID() + " (owners)", security.KeyID() + " (security)"} {
		if status != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("/readyz = %d %q, want it to say %q", status, body, want)
		}
	}
	report := s.logRecords("garmd: catalogue signatures")
	if len(report) != 1 || !strings.Contains(fmt.Sprint(report[0]["signing"]), "version 7") || !strings.Contains(fmt.Sprint(report[0]["signing"]), "per group owners=1,security=1") {
		t.Errorf("the startup report's signing line: %v", report)
	}
	ans := s.post("/garm.v1.ToolCatalogService/ListTools", s.token("public"), `{}`)
	var listing struct {
		Digest  string `json:"catalogue_digest"`
		Version uint64 `json:"catalogue_version"`
	}
	if err := json.Unmarshal(ans.body, &listing); err != nil || listing.Digest != digest || listing.Version != 7 {
		t.Errorf("the listing names %q version %d (%v), want %s version 7", listing.Digest, listing.Version, err, digest)
	}
}

func TestAnUnsignedGarmdListsNoVersionAndReadyzSaysOnlyReady(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	if status, body := s.admin("/readyz"); status != http.StatusOK || body != "ready" {
		t.Errorf("/readyz = %d %q, want 200 \"ready\"", status, body)
	}
	ans := s.post("/garm.v1.ToolCatalogService/ListTools", s.token("public"), `{}`)
	if strings.Contains(string(ans.body), "catalogue_version") {
		t.Errorf("an unsigned garmd lists a version: %s", ans.body[:min(len(ans.body), 200)])
	}
}

// newDaemonLike starts no stack: it is garmd.New with s's configuration
// changed by change, on s's bus, closed at once when it starts.
func newDaemonLike(t *testing.T, s *stack, change func(*garmd.Config)) error {
	t.Helper()
	cfg := s.cfg
	cfg.Listen, cfg.AdminListen = "127.0.0.1:0", "127.0.0.1:0"
	change(&cfg)
	ctx, cancel := context.WithCancel(context.Background())
	d, err := garmd.New(ctx, cfg)
	if err != nil {
		cancel()
		return err
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	cancel()
	<-done
	return nil
}

func TestGarmdRefusesToStartOnACatalogueItCannotTrust(t *testing.T) {
	t.Parallel()
	keys := newSigningKeys(t)
	owner, stranger := newSigner(t, signature.AlgEdDSA), newSigner(t, signature.AlgEdDSA)
	keys.publishKeys(groupOf{owner, ""})
	data := must(t, fixtureCatalogue)
	s := startStack(t, withSignedFileCatalogue(t, keys, data, sign(t, data, 5, owner)))
	other := variant(t, data, "another producer")

	tokenKeys := newSigningKeys(t)
	tokenKey, err := signature.PublicJWK(owner.Public(), "")
	if err != nil {
		t.Fatal(err)
	}
	tokenKey["use"] = "sig" // a token key: the same public key, another purpose
	raw, _ := json.Marshal(map[string]any{"keys": []any{tokenKey}})
	tokenKeys.writeRaw(raw)

	for name, c := range map[string]struct {
		data, env  []byte
		keys, name string
		want       string
	}{
		"unsigned":                        {data: data, want: "check unsigned"},
		"signed by an unknown key":        {data: data, env: sign(t, data, 6, stranger), want: "check unknown_key"},
		"signed over other bytes":         {data: other, env: sign(t, data, 6, owner), want: "check digest_mismatch"},
		"a truncated envelope":            {data: data, env: sign(t, data, 6, owner)[:100], want: "check malformed"},
		"older than the highest":          {data: other, env: sign(t, other, 4, owner), want: "check rollback"},
		"the version served, other bytes": {data: other, env: sign(t, other, 5, owner), want: "check version_reused"},
		"another name than configured":    {data: data, env: sign(t, data, 6, owner), name: "production", want: "check other_catalogue"},
		"the token issuer's key set":      {data: data, env: sign(t, data, 6, owner), keys: s.idpSrv.JWKSURL(), want: "catalogue key set"},
		"keys of another purpose":         {data: data, env: sign(t, data, 6, owner), keys: tokenKeys.path, want: "catalogue key set"},
	} {
		t.Run(name, func(t *testing.T) {
			err := newDaemonLike(t, s, func(cfg *garmd.Config) {
				opt := withSignedFileCatalogue(t, keys, c.data, c.env)
				opt(cfg)
				if c.env == nil {
					cfg.Catalogue = writeTemp(t, c.data)
				}
				if c.keys != "" {
					cfg.CatalogueKeys = c.keys
				}
				cfg.CatalogueName = c.name
			})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("garmd started, or refused for another reason: %v; want %q", err, c.want)
			}
		})
	}
	// The same catalogue and version starts again: a restart.
	if err := newDaemonLike(t, s, func(*garmd.Config) {}); err != nil {
		t.Fatalf("a restart on the catalogue served: %v", err)
	}
}

func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	path := t.TempDir() + "/catalogue.binpb"
	writeFile(t, path, data)
	return path
}

func TestMCPToolsListNamesTheSignedCatalogueThatAnsweredInEitherEra(t *testing.T) {
	t.Parallel()
	keys := newSigningKeys(t)
	owner := newSigner(t, signature.AlgEdDSA)
	keys.publishKeys(groupOf{owner, ""})
	data := must(t, fixtureCatalogue)
	s := startStack(t, withSignedFileCatalogue(t, keys, data, sign(t, data, 12, owner)), withMCPOn())
	token := s.token("public")
	for era, body := range map[string]string{
		"2025-11-25": `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		statelessEra: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + statelessEra + `"}}}`,
	} {
		ans := s.post("/mcp", token, body, "Accept", "application/json, text/event-stream", "Mcp-Protocol-Version", era)
		var rpc struct {
			Result struct {
				Tools []json.RawMessage `json:"tools"`
				Meta  map[string]any    `json:"_meta"`
			} `json:"result"`
		}
		if err := json.Unmarshal(ans.body, &rpc); err != nil || len(rpc.Result.Tools) == 0 {
			t.Fatalf("%s: tools/list: %d %s", era, ans.status, ans.body)
		}
		if m := rpc.Result.Meta; m["dev.garm/catalogue_digest"] != artifact.Digest(data) || m["dev.garm/catalogue_version"] != float64(12) {
			t.Errorf("%s: tools/list's _meta %v, want the digest and version 12", era, m)
		}
		if era == statelessEra && rpc.Result.Meta["io.modelcontextprotocol/serverInfo"] == nil {
			t.Errorf("%s: the server's identity left _meta: %v", era, rpc.Result.Meta)
		}
	}
}
