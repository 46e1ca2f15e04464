package buildversion

import "testing"

func TestAStampedReleaseIsTheVersion(t *testing.T) {
	if got := Resolve("v1.2.3"); got != "v1.2.3" {
		t.Errorf("Resolve(v1.2.3) = %q", got)
	}
}

// A test binary is built from the checkout: it records "(devel)" or no
// module version, which names no release.
func TestAnUnstampedBuildFromACheckoutIsDev(t *testing.T) {
	if got := Resolve(""); got != "dev" {
		t.Errorf("Resolve(\"\") = %q, want dev", got)
	}
}
