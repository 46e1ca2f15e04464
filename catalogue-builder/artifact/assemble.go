package artifact

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"time"

	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// SchemaVersion is the garm.tool.v1 vocabulary version this build writes and
// reads.
const SchemaVersion = 1

// MaxSize is the largest artifact read, the same ceiling garmd applies.
const MaxSize = 256 << 20

// Provenance is what a build records about itself.
type Provenance struct {
	Producer string
	Compiler string
	Source   string
	// BuiltAt is recorded only when set; the zero time keeps builds
	// deterministic.
	BuiltAt time.Time
}

// Assemble builds the catalogue of a linted model: files are the
// catalogue's own files (their imports are added, dependencies first), the
// model's taxonomy is written once per name, and every tool-bearing package
// gets its descriptor hash and its plans. It fails where a plan cannot be
// built, which a model that passed lint never does.
func Assemble(files []protoreflect.FileDescriptor, model *compile.Model, prov Provenance) (*cataloguev1.Catalogue, error) {
	c := &cataloguev1.Catalogue{
		AnnotationSchemaVersion: SchemaVersion,
		Files:                   descriptorSet(files),
		Compartments:            declarations(model.Compartments),
		ToolSets:                declarations(model.ToolSets),
		Attributes:              model.DeclaredAttributes(),
		Provenance: &cataloguev1.Provenance{
			Producer: prov.Producer,
			Compiler: prov.Compiler,
			Source:   prov.Source,
		},
		FieldDocs:        map[string]string{},
		DescriptorHashes: map[string]string{},
	}
	if !prov.BuiltAt.IsZero() {
		c.Provenance.BuiltAt = timestamppb.New(prov.BuiltAt.UTC())
	}
	packages := slices.Clone(model.Packages)
	slices.SortFunc(packages, func(a, b *compile.Package) int { return cmp.Compare(a.Name, b.Name) })
	for _, pkg := range packages {
		if len(pkg.Tools) == 0 {
			continue
		}
		plan, err := compile.PlanPackage(pkg)
		if err != nil {
			return nil, err
		}
		if plan.Rules, err = compile.PlanRules(model, pkg); err != nil {
			return nil, err
		}
		if err := addFieldDocs(c.FieldDocs, pkg, plan); err != nil {
			return nil, err
		}
		c.DescriptorHashes[string(pkg.Name)] = pkg.DescriptorHash
		c.Plans = append(c.Plans, plan)
	}
	return c, nil
}

// descriptorSet is every file and what it imports, dependencies before the
// files that import them, starting from files in path order, without source
// information.
func descriptorSet(files []protoreflect.FileDescriptor) *descriptorpb.FileDescriptorSet {
	roots := slices.Clone(files)
	slices.SortFunc(roots, func(a, b protoreflect.FileDescriptor) int { return cmp.Compare(a.Path(), b.Path()) })
	set := &descriptorpb.FileDescriptorSet{}
	for _, f := range compile.WithImports(roots) {
		fdp := protodesc.ToFileDescriptorProto(f)
		fdp.SourceCodeInfo = nil
		set.File = append(set.File, fdp)
	}
	return set
}

// declarations writes a taxonomy once per name, sorted by name. Lint has
// already refused a name declared twice with different descriptions.
func declarations(all []compile.Declared) []*toolv1.Decl {
	byName := map[string]string{}
	for _, d := range all {
		byName[d.Name] = d.Description
	}
	out := make([]*toolv1.Decl, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, &toolv1.Decl{Name: name, Description: byName[name]})
	}
	return out
}

// addFieldDocs records the leading comment of every field a package's plans
// reach, by the field's full name.
func addFieldDocs(docs map[string]string, pkg *compile.Package, plan *planv1.PackagePlan) error {
	roots := map[string]protoreflect.MessageDescriptor{}
	for _, t := range pkg.Tools {
		roots[string(t.Desc.Input().FullName())] = t.Desc.Input()
		roots[string(t.Desc.Output().FullName())] = t.Desc.Output()
	}
	for _, mp := range plan.GetMessages() {
		root := roots[mp.GetMessage()]
		for _, rule := range mp.GetRules() {
			fd, err := compile.ResolveRule(root, rule)
			if err != nil {
				return err
			}
			if doc := compile.Doc(fd); doc != "" {
				docs[string(fd.FullName())] = doc
			}
		}
	}
	return nil
}

// Marshal writes a catalogue's bytes deterministically: fields in number
// order and map entries in key order, so equal catalogues are equal bytes.
func Marshal(c *cataloguev1.Catalogue) ([]byte, error) {
	out, err := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("writing the catalogue: %w", err)
	}
	return out, nil
}

// Digest is an artifact's identity: "sha256:" and the lowercase hex SHA-256
// of its bytes.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}
