package build_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/build"
	"github.com/garm-dev/garm/catalogue-builder/internal/buildtest"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// planCases are sources whose plan files protoc-gen-garm writes (committed
// generated code, or the plugin's goldens), with where those files are.
var planCases = []struct {
	sources   string
	planFiles string
	// more include roots, beside sources
	more []string
}{
	{"../../../examples/calculator/proto", "../../../examples/calculator/gen", nil},
	{"../../../protoc-gen-garm/testdata/plans", "../../../protoc-gen-garm/testdata/plans/want", nil},
	{"../../../protoc-gen-garm/testdata/schema_corpus", "../../../protoc-gen-garm/testdata/schema_corpus/want", nil},
	{"../../../protoc-gen-garm/testdata/several_services", "../../../protoc-gen-garm/testdata/several_services/want", nil},
	{"../../../protoc-gen-garm/testdata/minimal", "../../../protoc-gen-garm/testdata/minimal/want", nil},
	{"../../../protoc-gen-garm/testdata/custom_name", "../../../protoc-gen-garm/testdata/custom_name/want", nil},
	{"../../../protoc-gen-garm/testdata/exclude", "../../../protoc-gen-garm/testdata/exclude/want", nil},
	{"../../../protoc-gen-garm/testdata/initialisms", "../../../protoc-gen-garm/testdata/initialisms/want", nil},
	{"testdata/shop/tools", "", []string{"testdata/shop/shared"}},
}

func TestTheArtifactsPlansEqualThePlanFilesProtocGenGarmWrites(t *testing.T) {
	for _, tc := range planCases {
		if tc.planFiles == "" {
			continue
		}
		t.Run(filepath.Base(tc.sources), func(t *testing.T) {
			a := buildtest.Artifact(t, tc.sources)
			files := planFiles(t, tc.planFiles)
			if len(files) != len(a.Catalogue.GetPlans()) {
				t.Fatalf("the artifact holds %d package plans, protoc-gen-garm wrote %d files", len(a.Catalogue.GetPlans()), len(files))
			}
			for _, got := range a.Catalogue.GetPlans() {
				want, ok := files[got.GetPackage()]
				if !ok {
					t.Fatalf("no plan file for package %s", got.GetPackage())
				}
				if !proto.Equal(want, got) {
					t.Errorf("package %s: the artifact's plan differs from the plan file\nfile:     %s\nartifact: %s", got.GetPackage(), protojson.Format(want), protojson.Format(got))
				}
			}
		})
	}
}

// planFiles reads every *.garm.json under dir by the package it plans.
func planFiles(t *testing.T, dir string) map[string]*planv1.PackagePlan {
	t.Helper()
	out := map[string]*planv1.PackagePlan{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".garm.json") {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		plan := new(planv1.PackagePlan)
		if err := protojson.Unmarshal(raw, plan); err != nil {
			return err
		}
		out[plan.GetPackage()] = plan
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no plan file under %s", dir)
	}
	return out
}

func TestEveryPlanResolvesAgainstTheArtifactsOwnDescriptors(t *testing.T) {
	for _, tc := range planCases {
		t.Run(filepath.Base(tc.sources), func(t *testing.T) {
			// Read the bytes afresh, so nothing of the build's own
			// descriptors is reused: only what the artifact carries.
			a, err := artifact.Read(buildtest.Build(t, append([]string{tc.sources}, tc.more...)...).Bytes)
			if err != nil {
				t.Fatal(err)
			}
			rules := 0
			for _, tool := range a.Tools() {
				pkg := string(tool.Desc.ParentFile().Package())
				for _, md := range []protoreflect.MessageDescriptor{tool.Desc.Input(), tool.Desc.Output()} {
					if md.ParentFile() == nil {
						t.Fatalf("%s: %s has no file", tool.FQN, md.FullName())
					}
					if _, err := a.Files.FindDescriptorByName(md.FullName()); err != nil {
						t.Fatalf("%s: %s does not resolve in the artifact's descriptors: %v", tool.FQN, md.FullName(), err)
					}
					plan := a.Plan(pkg, string(md.FullName()))
					if plan == nil {
						t.Fatalf("%s: no plan for %s", tool.FQN, md.FullName())
					}
					for _, rule := range plan.GetRules() {
						fd, err := compile.ResolveRule(md, rule)
						if err != nil {
							t.Fatal(err)
						}
						if got := int32(fd.Number()); got != rule.GetNumbers()[len(rule.GetNumbers())-1] {
							t.Errorf("%s %s: field number %d, rule says %v", md.FullName(), rule.GetPath(), got, rule.GetNumbers())
						}
						if got := compile.ContainerOf(fd); got != rule.GetContainer() {
							t.Errorf("%s %s: the field is a %s, the rule says %s", md.FullName(), rule.GetPath(), got, rule.GetContainer())
						}
						if !strings.HasSuffix(string(fd.FullName()), "."+lastSegment(rule.GetPath())) {
							t.Errorf("%s %s resolved to %s", md.FullName(), rule.GetPath(), fd.FullName())
						}
						rules++
					}
				}
			}
			if rules == 0 {
				t.Fatal("no rule was checked")
			}
		})
	}
}

func lastSegment(path string) string { return path[strings.LastIndexByte(path, '.')+1:] }

func TestTheBuildRefusesWhatThePluginOnlyWarnsAbout(t *testing.T) {
	// The plugin sees one module and warns about declarations it cannot
	// see; the catalogue is the whole set, so the same sources refuse.
	for _, name := range []string{"lint_l7_undeclared", "lint_l20", "lint_l12_elsewhere"} {
		t.Run(name, func(t *testing.T) {
			_, err := buildtest.Try("../../../protoc-gen-garm/testdata/" + name)
			refused, ok := err.(*build.Refused)
			if !ok {
				t.Fatalf("got %v, want a lint refusal", err)
			}
			for _, d := range refused.Diagnostics {
				if d.Severity == compile.Error && strings.Contains(d.Message, "garm-catalogue build checks it") {
					t.Errorf("a catalogue-scope error defers to the catalogue build: %s", d)
				}
			}
			if refused.Diagnostics.Errors() == 0 {
				t.Fatal("refused without an error")
			}
		})
	}
}

// equalExcept reports whether two catalogues are equal once clear has
// cleared what may differ in each.
func equalExcept(a, b *artifact.Artifact, clear func(c proto.Message)) bool {
	x, y := proto.Clone(a.Catalogue), proto.Clone(b.Catalogue)
	clear(x)
	clear(y)
	return proto.Equal(x, y)
}
