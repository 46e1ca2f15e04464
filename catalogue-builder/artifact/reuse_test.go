package artifact_test

import (
	"slices"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/buildtest"
	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// changedFiles are built, and built with its descriptor files changed in
// the ways a file's key must tell apart: a file's options, a file others
// import, a name, the order, a file twice, a file dropped from its
// importer's imports, truncated.
func changedFiles(t *testing.T, built []byte) map[string][]byte {
	t.Helper()
	c := new(cataloguev1.Catalogue)
	if err := proto.Unmarshal(built, c); err != nil {
		t.Fatal(err)
	}
	files := c.GetFiles().GetFile()
	last := files[len(files)-1]
	reencoded := func(change func(c *cataloguev1.Catalogue)) []byte {
		c := proto.Clone(c).(*cataloguev1.Catalogue)
		change(c)
		out, err := artifact.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	return map[string][]byte{
		"as built": built,
		"the last file's options changed": reencoded(func(c *cataloguev1.Catalogue) {
			f := c.GetFiles().GetFile()[len(files)-1]
			f.Options.GoPackage = proto.String(f.GetOptions().GetGoPackage() + "x")
		}),
		// The importers' bytes are as they were; their imports' are not.
		vocabularyChanged: reencoded(func(c *cataloguev1.Catalogue) {
			c.GetFiles().GetFile()[0].Options.JavaPackage = proto.String("forged")
		}),
		"the last file renamed": reencoded(func(c *cataloguev1.Catalogue) {
			c.GetFiles().GetFile()[len(files)-1].Name = proto.String("other.proto")
		}),
		"files in reverse": reencoded(func(c *cataloguev1.Catalogue) { slices.Reverse(c.GetFiles().GetFile()) }),
		"the last file twice": reencoded(func(c *cataloguev1.Catalogue) {
			c.Files.File = append(c.Files.File, proto.Clone(last).(*descriptorpb.FileDescriptorProto))
		}),
		// protodesc refuses a field whose type is not imported.
		"the last file's import dropped": reencoded(func(c *cataloguev1.Catalogue) {
			f := c.GetFiles().GetFile()[len(files)-1]
			f.Dependency = f.Dependency[:len(f.Dependency)-1]
		}),
		"a file truncated": slices.Concat(built, protowire.AppendBytes(protowire.AppendTag(nil, protowire.Number(artifact.CatalogueFilesField), protowire.BytesType), []byte{0x0a, 0x09, 0x0a, 0x03})),
		"truncated":        built[:len(built)-3],
	}
}

// vocabularyChanged names the changedFiles case in which a file that
// others import changed under them.
const vocabularyChanged = "a vocabulary file changed under the files that import it"

// sameFiles fails t unless got resolves exactly want's files, each to the
// same descriptors.
func sameFiles(t *testing.T, want, got *artifact.Artifact) {
	t.Helper()
	if got.Files.NumFiles() != want.Files.NumFiles() {
		t.Fatalf("%d files, want %d", got.Files.NumFiles(), want.Files.NumFiles())
	}
	want.Files.RangeFiles(func(wf protoreflect.FileDescriptor) bool {
		gf, err := got.Files.FindFileByPath(wf.Path())
		if err != nil {
			t.Fatalf("%s: %v", wf.Path(), err)
		}
		if !proto.Equal(protodesc.ToFileDescriptorProto(wf), protodesc.ToFileDescriptorProto(gf)) {
			t.Fatalf("%s: other descriptors", wf.Path())
		}
		return true
	})
}

// sameReload fails t unless ReloadToServe of data over serving accepts
// exactly when ReadToServe does, and then holds the same artifact, every
// file's descriptors equal to the ones ReadToServe builds; and unless a file
// it took from serving is byte for byte, imports included, one serving was
// built from.
func sameReload(t *testing.T, data []byte, serving *artifact.Artifact) {
	t.Helper()
	want, wantErr := artifact.ReadToServe(data)
	got, gotErr := artifact.ReloadToServe(data, serving.Built)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("ReadToServe: %v; ReloadToServe: %v", wantErr, gotErr)
	}
	if wantErr != nil {
		return
	}
	if got.Digest != want.Digest || !proto.Equal(got.Catalogue, want.Catalogue) {
		t.Fatal("ReloadToServe read another catalogue")
	}
	if got.Built.Len() != want.Built.Len() {
		t.Fatalf("%d files keyed, want %d", got.Built.Len(), want.Built.Len())
	}
	sameFiles(t, want, got)
	reused := 0
	want.Files.RangeFiles(func(wf protoreflect.FileDescriptor) bool {
		gf, _ := got.Files.FindFileByPath(wf.Path()) // sameFiles found it
		if sf, err := serving.Files.FindFileByPath(wf.Path()); err == nil && sf == gf {
			reused++
			if !proto.Equal(protodesc.ToFileDescriptorProto(sf), protodesc.ToFileDescriptorProto(wf)) {
				t.Fatalf("%s: reused though it changed", wf.Path())
			}
		}
		return true
	})
	if reused != got.Reused {
		t.Fatalf("%d files are serving's, %d counted reused", reused, got.Reused)
	}
}

func TestReloadingToServeAcceptsAndRefusesWhatReadingToServeDoes(t *testing.T) {
	built := buildtest.Build(t, "../../examples/calculator/proto").Bytes
	serving, err := artifact.ReadToServe(built)
	if err != nil {
		t.Fatal(err)
	}
	if serving.Built.Len() != serving.Files.NumFiles() || serving.Reused != 0 {
		t.Fatalf("%d of %d files keyed, %d reused with nothing serving", serving.Built.Len(), serving.Files.NumFiles(), serving.Reused)
	}
	if same, err := artifact.ReloadToServe(built, serving.Built); err != nil || same.Reused != serving.Files.NumFiles() {
		t.Fatalf("the same bytes reused %d of %d files (%v)", same.Reused, serving.Files.NumFiles(), err)
	}
	if read, err := artifact.Read(built); err != nil || read.Built != nil {
		t.Fatalf("Read keyed its files: %v", err)
	}

	inputs := changedFiles(t, built)
	// serving's docs, then one that is not UTF-8: checked again.
	inputs["field docs that are not UTF-8 after serving's"] = slices.Concat(built, record(6, slices.Concat(record(1, []byte("a.b")), record(2, []byte("\xff")))))
	inputs["a field doc added"] = slices.Concat(built, record(6, slices.Concat(record(1, []byte("a.b")), record(2, []byte("A doc.")))))
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) { sameReload(t, data, serving) })
	}
}

func FuzzReloadToServeIsReadToServe(f *testing.F) {
	built := buildtest.Build(f, "../../examples/calculator/proto").Bytes
	serving, err := artifact.ReadToServe(built)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(built)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) { sameReload(t, data, serving) })
}
