package build

import (
	"context"
	"errors"
	"fmt"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"slices"
	"strings"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/manifest"
	"github.com/garm-dev/garm/catalogue-builder/internal/sources"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
)

// Input is what one build reads. Exactly one of Manifest and Image is set.
type Input struct {
	Manifest *manifest.Manifest
	// Image is a buf image or FileDescriptorSet's bytes.
	Image []byte
	// Source is provenance free text for an image build; a manifest build
	// takes the manifest's.
	Source string
	// Producer is "garm-catalogue/<version>".
	Producer string
	// BuiltAt is recorded when set; left zero, builds are deterministic.
	BuiltAt time.Time
}

// Result is a built catalogue.
type Result struct {
	// Bytes are the artifact, ready to write.
	Bytes []byte
	// Artifact is Bytes read back and checked.
	Artifact *artifact.Artifact
	// Warnings are lint's warnings; they never refuse.
	Warnings compile.Diagnostics
}

// Refused is a build that linted with errors. Diagnostics holds every
// finding, warnings included, in lint's order.
type Refused struct {
	Diagnostics compile.Diagnostics
}

func (r *Refused) Error() string {
	return fmt.Sprintf("refused: %d lint error(s)", r.Diagnostics.Errors())
}

// ErrNoTools refuses a catalogue that would serve nothing.
var ErrNoTools = errors.New("refused: the sources declare no tool; a catalogue serves at least one")

// Run builds a catalogue. Compile problems come back as sources.Problems,
// lint errors as *Refused, problems with the manifest's limits as
// manifest.Problems, and nothing is returned to write unless every
// check passed.
func Run(ctx context.Context, in Input) (*Result, error) {
	set, source, err := read(ctx, in)
	if err != nil {
		return nil, err
	}
	model, err := compile.Build(set.Files)
	if err != nil {
		return nil, err
	}
	var manifestDiags compile.Diagnostics
	if in.Manifest != nil && in.Manifest.Taxonomy != nil {
		manifestDiags = adoptTaxonomy(model, in.Manifest)
	}
	diags := append(compile.Lint(model, compile.CatalogueScope), manifestDiags...)
	if diags.HasErrors() {
		return nil, &Refused{Diagnostics: diags}
	}
	if countTools(model) == 0 {
		return nil, ErrNoTools
	}
	limits, problems, limitWarnings := resolveLimits(model, in.Manifest)
	if len(problems) > 0 {
		return nil, problems
	}
	diags = append(diags, limitWarnings...)
	catalogue, err := artifact.Assemble(set.Files, model, artifact.Provenance{
		Producer: in.Producer,
		Compiler: set.Compiler,
		Source:   source,
		BuiltAt:  in.BuiltAt,
	})
	if err != nil {
		return nil, err
	}
	catalogue.Limits = limits
	data, err := artifact.Marshal(catalogue)
	if err != nil {
		return nil, err
	}
	back, err := artifact.Read(data)
	if err != nil {
		return nil, fmt.Errorf("the built artifact does not read back (a bug in garm-catalogue): %w", err)
	}
	return &Result{Bytes: data, Artifact: back, Warnings: diags}, nil
}

func read(ctx context.Context, in Input) (*sources.Set, string, error) {
	switch {
	case (in.Manifest == nil) == (in.Image == nil):
		return nil, "", errors.New("build needs a manifest or an image, and not both")
	case in.Image != nil:
		set, err := sources.FromImage(in.Image)
		return set, in.Source, err
	}
	roots := make([]string, len(in.Manifest.Include))
	for i, inc := range in.Manifest.Include {
		roots[i] = inc.Abs
	}
	set, err := sources.Compile(ctx, roots)
	return set, in.Manifest.Source, err
}

// adoptTaxonomy makes the manifest's taxonomy part of the model, so lint's
// taxonomy rules see it, and refuses (M1) a file declaring a name the
// manifest does not: a manifest's taxonomy is the whole taxonomy.
func adoptTaxonomy(model *compile.Model, m *manifest.Manifest) compile.Diagnostics {
	var diags compile.Diagnostics
	adopt := func(kind string, fromFiles []compile.Declared, fromManifest []manifest.Decl) []compile.Declared {
		listed := map[string]bool{}
		var merged []compile.Declared
		for _, d := range fromManifest {
			listed[d.Name] = true
			merged = append(merged, compile.Declared{Name: d.Name, Description: d.Description, File: fmt.Sprintf("%s:%d", m.Path, d.Line)})
		}
		for _, d := range fromFiles {
			if !listed[d.Name] {
				diags = append(diags, compile.Diagnostic{
					Severity: compile.Error,
					Rule:     "M1",
					Path:     d.File,
					Message:  fmt.Sprintf("declares %s %q, which %s's taxonomy does not list; when the manifest has a taxonomy it is the whole taxonomy", kind, d.Name, m.Path),
				})
			}
		}
		return append(merged, fromFiles...)
	}
	model.Compartments = adopt("compartment", model.Compartments, m.Taxonomy.Compartments)
	model.ToolSets = adopt("tool set", model.ToolSets, m.Taxonomy.ToolSets)
	listed := map[string]bool{}
	var attrs []compile.DeclaredAttribute
	for _, a := range m.Taxonomy.Attributes {
		listed[a.Name] = true
		attrs = append(attrs, compile.DeclaredAttribute{Attribute: &toolv1.Attribute{
			Name: a.Name, Description: a.Description, Type: attributeTypes[a.Type], MaxItems: a.MaxItems, MaxLen: a.MaxLen,
		}, File: fmt.Sprintf("%s:%d", m.Path, a.Line)})
	}
	for _, d := range model.Attributes {
		if !listed[d.Attribute.GetName()] {
			diags = append(diags, compile.Diagnostic{
				Severity: compile.Error,
				Rule:     "M1",
				Path:     d.File,
				Message:  fmt.Sprintf("declares attribute %q, which %s's taxonomy does not list; when the manifest has a taxonomy it is the whole taxonomy", d.Attribute.GetName(), m.Path),
			})
		}
	}
	model.Attributes = append(attrs, model.Attributes...)
	slices.SortStableFunc(diags, func(a, b compile.Diagnostic) int {
		return strings.Compare(a.Path+a.Message, b.Path+b.Message)
	})
	return diags
}

// attributeTypes maps the manifest's spelling of an attribute's type to
// the vocabulary's; an unknown or missing one is TYPE_UNSPECIFIED, which
// lint refuses (L44).
var attributeTypes = map[string]toolv1.Attribute_Type{
	"string":      toolv1.Attribute_TYPE_STRING,
	"int":         toolv1.Attribute_TYPE_INT,
	"bool":        toolv1.Attribute_TYPE_BOOL,
	"string_list": toolv1.Attribute_TYPE_STRING_LIST,
}

func countTools(model *compile.Model) int {
	n := 0
	for _, pkg := range model.Packages {
		n += len(pkg.Tools)
	}
	return n
}
