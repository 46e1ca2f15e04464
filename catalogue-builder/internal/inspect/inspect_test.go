package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/build"
	"github.com/garm-dev/garm/catalogue-builder/internal/buildtest"
	"github.com/garm-dev/garm/catalogue-builder/internal/manifest"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// shopRoot is the fixture catalogue: two packages, a taxonomy, and a tool of
// each approval mode and audit level.
const shopRoot = "testdata/shop/proto"

// buildShop builds the fixture as a manifest build that records a source
// and a build time, so the goldens show every line of provenance. Its digest
// is deterministic: fixed sources, producer, source and time.
func buildShop(t *testing.T) *artifact.Artifact {
	t.Helper()
	thirty, tenThousand, two, perTenantDay := uint32(30), uint32(10000), uint32(2), "Calls per tenant per day."
	abs, err := filepath.Abs(shopRoot)
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Run(context.Background(), build.Input{
		Manifest: &manifest.Manifest{
			Path:    "catalogue.yaml",
			Schema:  manifest.SchemaV1,
			Source:  "git@example.com:shop/protos.git@v1.4.0",
			Include: []manifest.Include{{Dir: shopRoot, Abs: abs}},
			Limits: []manifest.Limit{
				{ID: "per_subject", Tool: "count_open_tickets", Rate: &manifest.Rate{Count: &thirty}},
				{ID: "per_tenant_day", AllTools: true, Description: &perTenantDay, Key: []string{"tenant"},
					Rate: &manifest.Rate{Count: &tenThousand, Window: "day"}, Cost: &two},
			},
		},
		Producer: buildtest.Producer,
		BuiltAt:  time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC),
	})
	if err != nil {
		t.Fatalf("building %s: %v", shopRoot, err)
	}
	return res.Artifact
}

func TestInspectWritesTheShopCatalogueAsItsGoldens(t *testing.T) {
	v := Describe(buildShop(t))
	for _, golden := range []struct {
		file  string
		write func(io.Writer, View) error
	}{
		{"testdata/shop/want.txt", WriteText},
		{"testdata/shop/want.json", WriteJSON},
	} {
		t.Run(filepath.Base(golden.file), func(t *testing.T) {
			var got bytes.Buffer
			if err := golden.write(&got, v); err != nil {
				t.Fatal(err)
			}
			compareGolden(t, golden.file, got.Bytes())
		})
	}
}

func TestJSONKeysAreSnakeCaseAndSortedAndListsAreNeverNull(t *testing.T) {
	var got bytes.Buffer
	if err := WriteJSON(&got, Describe(buildShop(t))); err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal(got.Bytes(), &generic); err != nil {
		t.Fatal(err)
	}
	// encoding/json writes map keys sorted: re-encoding the generic value
	// gives the same bytes only if the struct's keys were already sorted.
	var resorted bytes.Buffer
	enc := json.NewEncoder(&resorted)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(generic); err != nil {
		t.Fatal(err)
	}
	if got.String() != resorted.String() {
		t.Errorf("keys are not in sorted order:\n%s", got.String())
	}
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case nil:
			t.Errorf("%s is null", path)
		case map[string]any:
			for k, child := range v {
				if !snake.MatchString(k) {
					t.Errorf("%s.%s is not snake_case", path, k)
				}
				walk(path+"."+k, child)
			}
		case []any:
			for _, child := range v {
				walk(path+"[]", child)
			}
		}
	}
	walk("$", generic)
}

func TestABuildWithoutATimeOrSourceSaysSo(t *testing.T) {
	v := Describe(buildtest.Artifact(t, shopRoot))
	var text, js bytes.Buffer
	if err := WriteText(&text, v); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, v); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "built at") || strings.Contains(js.String(), "built_at") {
		t.Errorf("an unrecorded build time is shown:\n%s\n%s", text.String(), js.String())
	}
	if !regexp.MustCompile(`(?m)^source +\(none\)$`).MatchString(text.String()) {
		t.Errorf("an empty source is not shown as (none):\n%s", text.String())
	}
}

func TestEveryToolIsListedUnderItsPackageWithThatPackagesHash(t *testing.T) {
	a := buildShop(t)
	v := Describe(a)
	var listed []string
	for _, pkg := range v.Packages {
		if want := a.Catalogue.GetDescriptorHashes()[pkg.Name]; pkg.DescriptorHash != want || want == "" {
			t.Errorf("package %s: descriptor hash %q, the artifact records %q", pkg.Name, pkg.DescriptorHash, want)
		}
		for _, tool := range pkg.Tools {
			if !strings.HasPrefix(tool.FQN, pkg.Name+".") {
				t.Errorf("tool %s is listed under package %s", tool.FQN, pkg.Name)
			}
			listed = append(listed, tool.FQN)
		}
	}
	var want []string
	for _, tool := range a.Tools() {
		want = append(want, tool.FQN)
	}
	if strings.Join(listed, " ") != strings.Join(want, " ") {
		t.Errorf("tools listed %v, the artifact holds %v", listed, want)
	}
}

func TestEnumNameDropsTheTypePrefix(t *testing.T) {
	tests := []struct {
		value protoreflect.Enum
		want  string
	}{
		{toolv1.Verb_VERB_READ, "READ"},
		{toolv1.Verb_VERB_DESTRUCTIVE, "DESTRUCTIVE"},
		{toolv1.Clearance_CLEARANCE_CONFIDENTIAL, "CONFIDENTIAL"},
		{toolv1.Clearance_CLEARANCE_UNSPECIFIED, "UNSPECIFIED"},
		{toolv1.ToolPolicy_Approval_MODE_GRANT, "GRANT"},
		{toolv1.ToolPolicy_Audit_LEVEL_AUDIT, "AUDIT"},
		{toolv1.Audience_AUDIENCE_PERSON, "PERSON"},
		// A value a newer vocabulary added is shown by number, not hidden.
		{toolv1.Clearance(25), "25"},
	}
	for _, tt := range tests {
		if got := EnumName(tt.value); got != tt.want {
			t.Errorf("EnumName(%v) = %q, want %q", tt.value, got, tt.want)
		}
	}
}

// compareGolden compares got with the file at path, or rewrites the file
// under -update.
func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
