package garmd_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	garmd "github.com/garm-dev/garm/daemon"
)

func TestAnS3CatalogueURLMustNameOneObject(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"s3://catalogues/prod/catalogue.binpb": "",
		"s3://catalogues":                      "the key is missing",
		"s3://catalogues/":                     "the key is missing",
		"s3:///prod/catalogue.binpb":           "the bucket is missing",
		"s3://catalogues:9000/c.binpb":         "a port is not allowed",
		"s3://catalogues/c.binpb?versionId=1":  "a query",
		"s3://catalogues/c.binpb#top":          "a fragment",
		"s3://key:hunter2@catalogues/c.binpb":  "user information",
	} {
		cfg := garmd.DefaultConfig()
		cfg.Catalogue = raw
		err := cfg.Validate()
		switch {
		case err == nil:
			t.Fatalf("%s: the rest of the configuration is missing, and Validate accepted it", raw)
		case want == "" && strings.Contains(err.Error(), "--catalogue"):
			t.Errorf("%s refused: %v", raw, err)
		case want != "" && !strings.Contains(err.Error(), "--catalogue: s3 URL: "+want):
			t.Errorf("%s: want a problem saying %q, got %v", raw, want, err)
		case strings.Contains(err.Error(), "hunter2"):
			t.Errorf("the problem echoes the URL's secret: %v", err)
		}
	}
}

func TestTheCataloguePollDefaultsToThirtySecondsAndIsNeverNegative(t *testing.T) {
	t.Parallel()
	cfg := garmd.DefaultConfig()
	if cfg.CataloguePoll != 30*time.Second {
		t.Errorf("default --catalogue-poll %s", cfg.CataloguePoll)
	}
	cfg.CataloguePoll = -time.Second
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "--catalogue-poll -1s is negative") {
		t.Errorf("a negative poll: %v", err)
	}
}

func TestAFileCatalogueSaysThePollIsIgnored(t *testing.T) {
	t.Parallel()
	s := startStack(t, withLogLedger())
	if !strings.Contains(s.logs.String(), `"refresh":"read once from a file at start; restart garmd to serve another catalogue (--catalogue-poll applies to s3:// only and is ignored)"`) {
		t.Errorf("the startup report's refresh line:\n%s", s.logs)
	}
}

func TestCheckReadsAnS3CatalogueOnce(t *testing.T) {
	store := startCatalogueStore(t)
	store.publish(must(t, fixtureCatalogue))
	var out bytes.Buffer
	if err := garmd.Check(&out, garmd.CheckConfig{Catalogue: catalogueURL}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "catalogue "+catalogueURL) || !strings.Contains(out.String(), "would mount") {
		t.Errorf("check output:\n%s", out.String())
	}
	store.publish(must(t, governedCatalogue))
	if err := garmd.Check(&out, garmd.CheckConfig{Catalogue: catalogueURL}); err == nil || !strings.Contains(err.Error(), "MODE_GRANT") {
		t.Errorf("an unmountable s3:// catalogue: %v", err)
	}
	if err := garmd.Check(&out, garmd.CheckConfig{Catalogue: "s3://catalogues/absent"}); err == nil || !strings.Contains(err.Error(), "s3://catalogues/absent") {
		t.Errorf("a missing object: %v", err)
	}
}

func TestGarmdRefusesToStartWhenItsS3CatalogueCannotBeRead(t *testing.T) {
	startCatalogueStore(t) // the bucket exists; the object does not
	cfg := garmd.DefaultConfig()
	cfg.Catalogue = "s3://" + catalogueBucket + "/absent.binpb"
	cfg.Issuers, cfg.JWKS = []string{"https://i"}, []string{"https://i/jwks.json"}
	cfg.HashKeyFile = filepath.Join(t.TempDir(), "hash.key")
	writeFile(t, cfg.HashKeyFile, []byte("a test hash key of more than sixteen bytes\n"))
	_, err := garmd.New(t.Context(), cfg)
	if err == nil || !strings.Contains(err.Error(), "catalogue s3://"+catalogueBucket+"/absent.binpb") {
		t.Errorf("New with a missing catalogue object: %v", err)
	}
}
