package quarantine

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// Verdict is why one package is quarantined: the first mismatching
// instance a round found.
type Verdict struct {
	Package string
	// Expected is the serving catalogue's descriptor hash for the package.
	Expected string
	// Advertised is the instance's garm.identity metadata; empty when it
	// advertised none.
	Advertised string
	// Service and Instance name the micro service instance that
	// advertised it.
	Service, Instance string
}

// Reason is the verdict for the ledger's error_detail and the operator:
// what differs (the package, the catalogue's hash and the one advertised)
// and what to run (Remedy). It names hashes and services, never a caller.
func (v Verdict) Reason() string {
	advertised := "advertises descriptor hash " + v.Advertised
	if v.Advertised == "" {
		advertised = "advertises no descriptor hash"
	}
	return fmt.Sprintf("package %s: service %s (instance %s) %s; the catalogue's is %s. To fix: %s",
		v.Package, v.Service, v.Instance, advertised, v.Expected, v.Remedy())
}

// Remedy is what ends the quarantine. A differing hash is almost always a
// .proto edited after one side was built: the service's generated code and
// the catalogue were compiled from different versions of it.
func (v Verdict) Remedy() string {
	if v.Advertised == "" {
		return "serve the package through runtime/garmtool with its generated bindings (Serve<Service>), which advertise the bindings' DescriptorHash, and restart the service"
	}
	return "the service and the catalogue were built from different versions of the package's .proto; " +
		"regenerate the service's code from the .proto the catalogue should serve (go tool buf generate, or make generate), " +
		"rebuild the catalogue from the same .proto (garm catalogue build; garm dev rebuilds it when the .proto is saved), " +
		"and restart the service so that it advertises the new hash"
}

// Verdicts is one round's outcome: the quarantined packages and why. It is
// never changed once published, so any number of calls may read it.
type Verdicts struct {
	byPackage map[string]Verdict
	reasons   map[string]string
	// At is when the round that produced it ended; zero before any round.
	At time.Time
	// Complete is false when the round could not see every running
	// service (it then only added to what was quarantined before).
	Complete bool
}

func newVerdicts(byPackage map[string]Verdict, at time.Time, complete bool) *Verdicts {
	reasons := make(map[string]string, len(byPackage))
	for pkg, v := range byPackage {
		reasons[pkg] = v.Reason()
	}
	return &Verdicts{byPackage: byPackage, reasons: reasons, At: at, Complete: complete}
}

// Quarantined reports whether pkg is quarantined, and why. A nil Verdicts
// quarantines nothing.
func (v *Verdicts) Quarantined(pkg string) (reason string, ok bool) {
	if v == nil {
		return "", false
	}
	reason, ok = v.reasons[pkg]
	return reason, ok
}

// Packages are the quarantined packages, sorted.
func (v *Verdicts) Packages() []string {
	if v == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(v.byPackage))
}

// Verdict is pkg's verdict, when it is quarantined.
func (v *Verdicts) Verdict(pkg string) (Verdict, bool) {
	if v == nil {
		return Verdict{}, false
	}
	verdict, ok := v.byPackage[pkg]
	return verdict, ok
}
