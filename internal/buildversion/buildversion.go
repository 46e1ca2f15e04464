package buildversion

import "runtime/debug"

// Resolve is stamped when the link stamped a release, else the module
// version the binary records, else "dev" (a build from a checkout records
// "(devel)", which names no release).
func Resolve(stamped string) string {
	if stamped != "" {
		return stamped
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}
