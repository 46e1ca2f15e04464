package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/mod/modfile"
	gomodule "golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// garmModule is the module a scaffold requires.
const garmModule = "github.com/garm-dev/garm"

// sourceDir is the checkout this garm was built from, stamped by the
// Makefile's builds of garm (-ldflags -X main.sourceDir=...): build info
// holds the main module's version but not its directory (decision 0115).
var sourceDir string

// builtFrom is the garm checkout this command was built from: the stamped
// sourceDir, else the directory the compiler saw this file in (a build
// without -trimpath, such as go run or go test), provided it still holds
// garm's go.mod. ok is false for a release, a build whose checkout has
// moved, and a -trimpath build nobody stamped.
func builtFrom() (dir string, ok bool) { return firstCheckout(checkoutCandidates()) }

// firstCheckout is the first of dirs that holds garm's go.mod.
func firstCheckout(dirs []string) (string, bool) {
	for _, dir := range dirs {
		if dir != "" && isGarmCheckout(dir) {
			return dir, true
		}
	}
	return "", false
}

// checkoutCandidates are where builtFrom looks, in order.
func checkoutCandidates() []string {
	candidates := []string{sourceDir}
	if _, file, _, found := runtime.Caller(0); found && filepath.IsAbs(file) {
		candidates = append(candidates, filepath.Dir(filepath.Dir(filepath.Dir(file))))
	}
	return candidates
}

// isGarmCheckout reports whether dir holds garm's go.mod.
func isGarmCheckout(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	return err == nil && modfile.ModulePath(data) == garmModule
}

// releasedGarm is the release of garm this command was built from: a
// tagged, clean version in build info. A pseudo-version (Go stamps one on a
// build from a checkout) or a +dirty build is not one: no module proxy
// serves it.
func releasedGarm() (string, bool) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	return info.Main.Version, isRelease(info.Main.Version)
}

func isRelease(v string) bool {
	return semver.IsValid(v) && semver.Build(v) == "" && !gomodule.IsPseudoVersion(v)
}

// newUsage is garm new's usage after "garm new": every flag of flags, so
// the usage line cannot drift from what the command takes.
func newUsage(flags *flag.FlagSet) string {
	var b strings.Builder
	b.WriteString("toolservice NAME")
	flags.VisitAll(func(f *flag.Flag) {
		name, _ := flag.UnquoteUsage(f)
		fmt.Fprintf(&b, " [--%s %s]", f.Name, name)
	})
	return b.String()
}
