package sealer

import "github.com/garm-dev/garm/internal/buildversion"

// version is the release, set at link time with
// -ldflags "-X github.com/garm-dev/garm/ledger/sealer.version=v1.2.3" (make
// install, make image); left empty, the module version recorded in the
// binary is used.
var version string

// Version is the sealer's version: the one set at link time, else the
// module version recorded in the binary, else "dev".
func Version() string { return buildversion.Resolve(version) }
