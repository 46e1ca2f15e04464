package artifact_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/buildtest"
	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
)

// records splits a message's bytes into its top-level fields.
func records(t *testing.T, data []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(data) > 0 {
		_, _, n := protowire.ConsumeField(data)
		if n < 0 {
			t.Fatal(protowire.ParseError(n))
		}
		out, data = append(out, data[:n]), data[n:]
	}
	return out
}

func TestDecodingInPartsIsProtoUnmarshal(t *testing.T) {
	built := buildtest.Build(t, "../../examples/calculator/proto").Bytes
	recs := records(t, built)
	shuffled := slices.Concat(recs[len(recs)-1:], recs[1:len(recs)-1], recs[:1])
	var odd []byte
	odd = protowire.AppendTag(odd, 99, protowire.VarintType) // unknown
	odd = protowire.AppendVarint(odd, 7)
	odd = protowire.AppendTag(odd, protowire.Number(artifact.CatalogueFilesField), protowire.VarintType) // files, wrong wire type
	odd = protowire.AppendVarint(odd, 1)
	inputs := map[string][]byte{
		"as built":                       built,
		"fields out of order":            slices.Concat(shuffled...),
		"a plan repeated at the front":   slices.Concat(append([][]byte{recs[len(recs)-1]}, recs...)...),
		"unknown and mistyped fields":    slices.Concat(built, odd),
		"the descriptor set twice":       slices.Concat(append(slices.Clone(recs), recs[1])...),
		"empty":                          nil,
		"truncated":                      built[:len(built)-3],
		"a mistyped plan record at last": slices.Concat(built, protowire.AppendVarint(protowire.AppendTag(nil, protowire.Number(artifact.CataloguePlansField), protowire.VarintType), 3)),
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			want, got := new(cataloguev1.Catalogue), new(cataloguev1.Catalogue)
			wantErr := proto.UnmarshalOptions{Resolver: artifact.OptionsUnresolved}.Unmarshal(data, want)
			gotErr := artifact.UnmarshalCatalogue(data, got)
			if (wantErr == nil) != (gotErr == nil) {
				t.Fatalf("proto.Unmarshal: %v; in parts: %v", wantErr, gotErr)
			}
			if wantErr == nil && !proto.Equal(want, got) {
				t.Fatal("decoding in parts gave another catalogue")
			}
		})
	}
}

func TestBuildingFilesInLevelsRefusesWhatProtodescRefuses(t *testing.T) {
	set := buildtest.Build(t, "../../examples/calculator/proto").Artifact.Catalogue.GetFiles()
	files := set.GetFile()
	byName := map[string]*descriptorpb.FileDescriptorProto{}
	for _, f := range files {
		byName[f.GetName()] = f
	}
	clone := func(fs ...*descriptorpb.FileDescriptorProto) *descriptorpb.FileDescriptorSet {
		out := &descriptorpb.FileDescriptorSet{}
		for _, f := range fs {
			out.File = append(out.File, proto.Clone(f).(*descriptorpb.FileDescriptorProto))
		}
		return out
	}
	reversed := slices.Clone(files)
	slices.Reverse(reversed)
	cycle := clone(files...)
	cycle.File[0].Dependency = append(cycle.File[0].Dependency, cycle.File[len(cycle.File)-1].GetName())
	cases := map[string]struct {
		set    *descriptorpb.FileDescriptorSet
		refuse string
	}{
		"as built":          {clone(files...), ""},
		"dependencies last": {clone(reversed...), ""},
		"a file twice":      {clone(append(slices.Clone(files), files[0])...), "file appears multiple times"},
		"an import missing": {clone(files[1:]...), "could not resolve import"},
		"an import cycle":   {cycle, "import cycle"},
		"a symbol defined twice": {func() *descriptorpb.FileDescriptorSet {
			s := clone(files...)
			dup := proto.Clone(byName["calc/v1/calc.proto"]).(*descriptorpb.FileDescriptorProto)
			dup.Name = proto.String("calc/v1/copy.proto")
			s.File = append(s.File, dup)
			return s
		}(), "name conflict"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, wantErr := protodesc.NewFiles(tc.set)
			got, gotErr := artifact.NewFiles(tc.set)
			if (wantErr == nil) != (gotErr == nil) {
				t.Fatalf("protodesc: %v; in levels: %v", wantErr, gotErr)
			}
			if tc.refuse == "" {
				if gotErr != nil || got.NumFiles() != len(tc.set.GetFile()) {
					t.Fatalf("%v, %d files", gotErr, got.NumFiles())
				}
				return
			}
			if !strings.Contains(gotErr.Error(), tc.refuse) {
				t.Fatalf("refused with %q, want %q (protodesc: %q)", gotErr, tc.refuse, wantErr)
			}
		})
	}
}
