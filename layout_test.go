// Package garm_test holds the repository-wide rules of the layout: which
// packages may reach which, checked with `go list -deps` rather than by
// review.
package garm_test

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/garm-dev/garm"

type listedPackage struct {
	ImportPath string
	Dir        string
	Deps       []string
}

// listPackages lists every package of the module with its non-test
// dependencies, including generated bindings kept under testdata.
func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to check import rules: %v", err)
	}
	patterns := []string{"./..."}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".tmp") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, "_garm.pb.go") && strings.Contains(path, "testdata") {
			patterns = append(patterns, "./"+filepath.ToSlash(filepath.Dir(path)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goBin, append([]string{"list", "-json"}, patterns...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// isGeneratedBindings reports whether a package holds protoc-gen-garm output.
func isGeneratedBindings(p listedPackage) bool {
	matches, _ := filepath.Glob(filepath.Join(p.Dir, "*_garm.pb.go"))
	return len(matches) > 0
}

func under(path string, prefixes ...string) bool {
	for _, prefix := range prefixes {
		if path == prefix || strings.HasPrefix(path, prefix+"/") {
			return true
		}
	}
	return false
}

func TestImportRules(t *testing.T) {
	pkgs := listPackages(t)
	bindings := map[string]bool{}
	for _, p := range pkgs {
		if isGeneratedBindings(p) {
			bindings[p.ImportPath] = true
		}
	}
	rules := []struct {
		name      string
		applies   func(listedPackage) bool
		forbidden func(dep string) bool
	}{
		{
			name: "runtime and generated bindings reach no daemon, devkit, builder, generator, CEL, JWT, AWS or NATS server code",
			applies: func(p listedPackage) bool {
				return (under(p.ImportPath, module+"/runtime") && !under(p.ImportPath, module+"/runtime/garmtooltest")) ||
					isGeneratedBindings(p)
			},
			forbidden: func(dep string) bool {
				return under(dep, module+"/daemon", module+"/devkit", module+"/catalogue-builder", module+"/protoc-gen-garm",
					"cel.dev/cel-go", "github.com/google/cel-go", "github.com/lestrrat-go/jwx", "github.com/aws",
					"github.com/nats-io/nats-server")
			},
		},
		{
			// The approvals service is a production component: it runs beside garmd, never
			// inside it, and knows no dev tooling or example.
			name: "the approvals service reaches no daemon, devkit, example or NATS server code",
			applies: func(p listedPackage) bool {
				return under(p.ImportPath, module+"/approvals") && !under(p.ImportPath, module+"/approvals/approvalstest")
			},
			forbidden: func(dep string) bool {
				return under(dep, module+"/daemon", module+"/devkit", module+"/examples", "github.com/nats-io/nats-server")
			},
		},
		{
			name:    "runtime/toolbind depends on protobuf alone",
			applies: func(p listedPackage) bool { return p.ImportPath == module+"/runtime/toolbind" },
			forbidden: func(dep string) bool {
				return strings.Contains(strings.SplitN(dep, "/", 2)[0], ".") && !under(dep, "google.golang.org/protobuf")
			},
		},
		{
			// garmd imports wire; a NATS client or the tool runtime reached
			// through it would make the daemon depend on what tools link.
			name:    "runtime/wire depends on protobuf, garm's generated vocabulary and the standard library alone",
			applies: func(p listedPackage) bool { return p.ImportPath == module+"/runtime/wire" },
			forbidden: func(dep string) bool {
				return strings.Contains(strings.SplitN(dep, "/", 2)[0], ".") &&
					!under(dep, "google.golang.org/protobuf", module+"/gen")
			},
		},
		{
			// A tool that wants no tracing links none (decision 0060):
			// garmtool is the one runtime package that starts spans.
			name: "OpenTelemetry is garmtool's alone in the runtime: toolbind, wire and generated bindings never reach it",
			applies: func(p listedPackage) bool {
				return p.ImportPath == module+"/runtime/toolbind" || p.ImportPath == module+"/runtime/wire" || isGeneratedBindings(p)
			},
			forbidden: func(dep string) bool { return under(dep, "go.opentelemetry.io") },
		},
		{
			name: "garmd's command reaches no example, devkit, NATS server or tool bindings",
			applies: func(p listedPackage) bool {
				return under(p.ImportPath, module+"/daemon/cmd/garmd")
			},
			forbidden: func(dep string) bool {
				return under(dep, module+"/examples", module+"/devkit", "github.com/nats-io/nats-server") || bindings[dep]
			},
		},
		{
			name: "the daemon imports runtime/wire and nothing else under runtime",
			applies: func(p listedPackage) bool {
				return under(p.ImportPath, module+"/daemon")
			},
			forbidden: func(dep string) bool {
				return under(dep, module+"/runtime") && dep != module+"/runtime/wire"
			},
		},
		{
			// garmd and the approvals service share the pending record; it
			// must not drag either side's code into the other.
			name:    "approvals/pending depends on runtime/wire, internal/fencedkv, the NATS client and the standard library alone",
			applies: func(p listedPackage) bool { return under(p.ImportPath, module+"/approvals/pending") },
			forbidden: func(dep string) bool {
				return strings.Contains(strings.SplitN(dep, "/", 2)[0], ".") &&
					!under(dep, module+"/runtime/wire", module+"/internal/fencedkv", module+"/gen", "google.golang.org/protobuf",
						"github.com/nats-io/nats.go", "github.com/nats-io/nkeys", "github.com/nats-io/nuid",
						"github.com/klauspost/compress", "golang.org/x/crypto", "golang.org/x/sys")
			},
		},
		{
			// The approvals service is the grant issuer; garmd must hold no
			// part of it but the shared record.
			name:    "the daemon imports approvals/pending and nothing else under approvals",
			applies: func(p listedPackage) bool { return under(p.ImportPath, module+"/daemon") },
			forbidden: func(dep string) bool {
				return under(dep, module+"/approvals") && dep != module+"/approvals/pending"
			},
		},
		{
			// The dev plane and the commands built on it (make dev, garm dev)
			// embed a server: decision 0047.
			name: "the NATS server appears only in garmtooltest, the dev plane and the commands on it",
			applies: func(p listedPackage) bool {
				return !under(p.ImportPath, module+"/runtime/garmtooltest", module+"/devkit/devplane",
					module+"/examples/devstack", module+"/cmd/garm")
			},
			forbidden: func(dep string) bool { return under(dep, "github.com/nats-io/nats-server") },
		},
	}
	for _, rule := range rules {
		checked := 0
		for _, p := range pkgs {
			if !under(p.ImportPath, module) || !rule.applies(p) {
				continue
			}
			checked++
			for _, dep := range p.Deps {
				if rule.forbidden(dep) {
					t.Errorf("%s: %s reaches %s", rule.name, p.ImportPath, dep)
				}
			}
		}
		t.Logf("%s: %d packages checked", rule.name, checked)
	}
}
