package artifact_test

import (
	"slices"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/buildtest"
	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// sameRead fails t unless ReadToServe of data accepts exactly when Read
// does, and then holds the same artifact less its descriptor set and field
// docs: the same digest, descriptors, plans, taxonomy and tools.
func sameRead(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := artifact.Read(data)
	got, gotErr := artifact.ReadToServe(data)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("Read: %v; ReadToServe: %v", wantErr, gotErr)
	}
	if wantErr != nil {
		t.Logf("both refuse: %v; %v", wantErr, gotErr)
		return
	}
	if got.Digest != want.Digest || got.Size != want.Size {
		t.Fatalf("read as %s (%d bytes), want %s (%d)", got.Digest, got.Size, want.Digest, want.Size)
	}
	if got.Catalogue.GetFiles() != nil || got.Catalogue.GetFieldDocs() != nil {
		t.Fatal("ReadToServe kept the descriptor set or the field docs")
	}
	rest := proto.Clone(want.Catalogue).(*cataloguev1.Catalogue)
	rest.Files, rest.FieldDocs = nil, nil
	if !proto.Equal(rest, got.Catalogue) {
		t.Fatal("ReadToServe read another catalogue")
	}
	sameFiles(t, want, got)
	fqns := func(a *artifact.Artifact) []string {
		var out []string
		for _, tool := range a.Tools() {
			out = append(out, tool.FQN+" "+tool.Method)
		}
		return out
	}
	if !slices.Equal(fqns(got), fqns(want)) {
		t.Fatalf("tools %q, want %q", fqns(got), fqns(want))
	}
}

// record is one top-level field of a message, tag and value.
func record(num protowire.Number, value []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), value)
}

func TestReadingToServeAcceptsAndRefusesWhatReadDoes(t *testing.T) {
	built := buildtest.Build(t, "../../examples/calculator/proto").Bytes
	recs := records(t, built)
	var setRec []byte // the descriptor set's record
	for _, r := range recs {
		if num, _, _ := protowire.ConsumeTag(r); num == protowire.Number(artifact.CatalogueFilesField) {
			setRec = r
		}
	}
	_, _, tagLen := protowire.ConsumeTag(setRec)
	setValue, _ := protowire.ConsumeBytes(setRec[tagLen:])
	files := records(t, setValue)
	without := func(drop []byte) [][]byte {
		var out [][]byte
		for _, r := range recs {
			if &r[0] != &drop[0] {
				out = append(out, r)
			}
		}
		return out
	}
	withSet := func(set ...[]byte) []byte {
		return slices.Concat(append(without(setRec), record(protowire.Number(artifact.CatalogueFilesField), slices.Concat(set...)))...)
	}
	_, _, fileTagLen := protowire.ConsumeTag(files[len(files)-1])
	lastFile, _ := protowire.ConsumeBytes(files[len(files)-1][fileTagLen:])
	fileRecord := func(content []byte) []byte { return record(1, content) }
	varint := func(num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
	}
	docsRecord := func(key, value string) []byte {
		entry := slices.Concat(record(1, []byte(key)), record(2, []byte(value)))
		return record(6, entry)
	}
	inputs := map[string][]byte{
		"as built":                          built,
		"the set after everything else":     withSet(files...),
		"the set split over two records":    slices.Concat(slices.Concat(without(setRec)...), record(2, slices.Concat(files[:2]...)), record(2, slices.Concat(files[2:]...))),
		"a file twice":                      withSet(append(slices.Clone(files), files[0])...),
		"a file missing":                    withSet(files[1:]...),
		"files in reverse":                  withSet(func() [][]byte { r := slices.Clone(files); slices.Reverse(r); return r }()...),
		"an unknown field in the set":       withSet(append(slices.Clone(files), varint(7, 1))...),
		"a mistyped file record":            withSet(append(slices.Clone(files), varint(1, 1))...),
		"a file renamed twice, last wins":   withSet(append(slices.Clone(files[:len(files)-1]), fileRecord(slices.Concat(record(1, []byte("x.proto")), lastFile)))...),
		"a mistyped name":                   withSet(append(slices.Clone(files[:len(files)-1]), fileRecord(slices.Concat(lastFile, varint(1, 3))))...),
		"a mistyped import":                 withSet(append(slices.Clone(files[:len(files)-1]), fileRecord(slices.Concat(lastFile, varint(3, 3))))...),
		"an import added":                   withSet(append(slices.Clone(files[:len(files)-1]), fileRecord(slices.Concat(lastFile, record(3, []byte("nowhere.proto")))))...),
		"a file truncated inside":           withSet(append(slices.Clone(files[:len(files)-1]), fileRecord(lastFile[:len(lastFile)/2]))...),
		"a file's message truncated":        withSet(append(slices.Clone(files[:len(files)-1]), fileRecord(slices.Concat(lastFile, record(4, []byte{0x0a, 0x05, 'a'}))))...),
		"field docs that are not UTF-8":     slices.Concat(built, docsRecord("a.b", "\xff")),
		"field docs with an unknown field":  slices.Concat(built, record(6, varint(9, 1))),
		"a mistyped field-docs record":      slices.Concat(built, varint(6, 1)),
		"truncated":                         built[:len(built)-3],
		"empty":                             nil,
		"garbage":                           []byte("\xff\xff\xff\xff not a catalogue"),
		"no descriptor set":                 slices.Concat(without(setRec)...),
		"an empty descriptor set":           withSet(),
		"a descriptor set of an empty file": withSet(fileRecord(nil)),
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) { sameRead(t, data) })
	}
}

func FuzzReadToServeIsRead(f *testing.F) {
	f.Add(buildtest.Build(f, "../../examples/calculator/proto").Bytes)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) { sameRead(t, data) })
}
