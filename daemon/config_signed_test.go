package garmd_test

import (
	"strings"
	"testing"

	garmd "github.com/garm-dev/garm/daemon"
)

func TestTheSigningFlagsRefuseWhatCannotWork(t *testing.T) {
	t.Parallel()
	cases := map[string]func(*garmd.Config){
		"--catalogue-min-signers is given without --catalogue-keys":       func(c *garmd.Config) { c.CatalogueMinSigners = 2 },
		"--catalogue-min-signers-group is given without --catalogue-keys": func(c *garmd.Config) { c.CatalogueMinPerGroup = garmd.GroupMinimums{"owners": 1} },
		"--catalogue-allow-rollback-to is given without --catalogue-keys": func(c *garmd.Config) { c.CatalogueAllowRollbackTo = 3 },
		`--catalogue-keys "http://keys.example/jwks": key sets are fetched over https`: func(c *garmd.Config) {
			c.CatalogueKeys = "http://keys.example/jwks"
		},
		"--catalogue-keys: stat /nonexistent/keys.json": func(c *garmd.Config) { c.CatalogueKeys = "/nonexistent/keys.json" },
		"the minimum number of signers is -1": func(c *garmd.Config) {
			c.CatalogueKeys, c.CatalogueMinSigners = "https://keys.example/jwks", -1
		},
	}
	for want, edit := range cases {
		cfg := garmd.DefaultConfig()
		cfg.Issuers, cfg.JWKS = []string{"https://i"}, []string{"https://i/jwks.json"}
		edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want a problem saying %q, got %v", want, err)
		}
	}
	ok := garmd.DefaultConfig()
	ok.CatalogueKeys, ok.CatalogueMinSigners = "http://127.0.0.1:7450/catalogue-keys.json", 2
	if err := ok.Validate(); err != nil && strings.Contains(err.Error(), "catalogue-") {
		t.Errorf("a loopback key set URL with two signers: %v", err)
	}
}

func TestAGroupMinimumIsGroupEqualsCount(t *testing.T) {
	t.Parallel()
	var g garmd.GroupMinimums
	if err := g.Set("security=1, owners=2"); err != nil {
		t.Fatal(err)
	}
	if err := g.Set("auditors=1"); err != nil {
		t.Fatal(err)
	}
	if g.String() != "auditors=1,owners=2,security=1" {
		t.Fatalf("%q", g.String())
	}
	for _, bad := range []string{"owners", "owners=0", "owners=x", "Owners=1", "=1"} {
		if err := new(garmd.GroupMinimums).Set(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
