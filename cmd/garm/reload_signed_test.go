package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
)

// servedVersion is the signed catalogue version garmd's /readyz names.
func servedVersion(t *testing.T, adminURL string) uint64 {
	t.Helper()
	resp, err := http.Get(adminURL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`catalogue garm-dev version (\d+) \(sha256:[0-9a-f]{64}\) signed by \S+`).FindSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("/readyz = %d %q, want it to name the signed catalogue", resp.StatusCode, body)
	}
	v, _ := strconv.ParseUint(string(m[1]), 10, 64)
	return v
}

func TestGarmDevServesASignedCatalogueAndSignsEachRebuildWithAHigherVersion(t *testing.T) {
	manifest, _ := calculatorCatalogue(t)
	p := startPlane(t, manifest)
	first := servedVersion(t, p.URLs().Admin)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := p.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if again := servedVersion(t, p.URLs().Admin); again <= first {
		t.Fatalf("the rebuild serves version %d after %d", again, first)
	}
	if code, out := garm(t, p, "call", "calc.v1.add", "--as", "outsider", `{"a": 1, "b": 2}`); code != exitOK {
		t.Fatalf("the rebuilt catalogue is not served: exit %d\n%s", code, out)
	}
}
