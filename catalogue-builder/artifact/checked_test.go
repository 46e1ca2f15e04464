package artifact_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/buildtest"
	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// checkedOf is what a check cache records after serving each of data:
// the keys of every file ReadToServe built and accepted.
func checkedOf(t testing.TB, data ...[]byte) *artifact.Checked {
	t.Helper()
	var keys []artifact.FileKey
	for _, d := range data {
		a, err := artifact.ReadToServe(d)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, a.Built.FileKeys()...)
	}
	return artifact.NewChecked(keys)
}

// sameCheckedRead fails t unless ReadCheckedToServe of data given checked
// accepts exactly when ReadToServe does, and then holds the same artifact,
// every file's descriptors equal to those built with every check; and
// unless the files it built from checked keys are exactly those whose
// keys — their bytes and their imports' — checked holds.
func sameCheckedRead(t *testing.T, data []byte, checked *artifact.Checked) *artifact.Artifact {
	t.Helper()
	want, wantErr := artifact.ReadToServe(data)
	got, gotErr := artifact.ReadCheckedToServe(data, nil, checked)
	if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
		t.Fatalf("ReadToServe: %v; ReadCheckedToServe: %v", wantErr, gotErr)
	}
	if wantErr != nil {
		return nil
	}
	if got.Digest != want.Digest || !proto.Equal(got.Catalogue, want.Catalogue) {
		t.Fatal("ReadCheckedToServe read another catalogue")
	}
	if !slices.Equal(got.Built.FileKeys(), want.Built.FileKeys()) {
		t.Fatalf("%d files keyed, want %d", got.Built.Len(), want.Built.Len())
	}
	sameFiles(t, want, got)
	held := 0
	for _, k := range want.Built.FileKeys() {
		if checked.Has(k) {
			held++
		}
	}
	if got.FromChecked != held {
		t.Fatalf("%d files built from checked keys, but checked holds the keys of %d", got.FromChecked, held)
	}
	tools := func(a *artifact.Artifact) []string {
		var out []string
		for _, tool := range a.Tools() {
			out = append(out, tool.FQN+" "+tool.Method+" "+tool.Subject+" "+tool.QueueGroup)
		}
		return out
	}
	if !slices.Equal(tools(got), tools(want)) {
		t.Fatalf("tools %q, want %q", tools(got), tools(want))
	}
	for i, tool := range got.Tools() {
		if !proto.Equal(tool.Policy, want.Tools()[i].Policy) {
			t.Fatalf("%s: another declaration", tool.FQN)
		}
	}
	return got
}

func TestFilesBuiltFromCheckedKeysAreTheFilesBuiltWithEveryCheck(t *testing.T) {
	bank := buildtest.Build(t, "../../examples/bank/proto").Bytes
	calculator := buildtest.Build(t, "../../examples/calculator/proto").Bytes
	checked := checkedOf(t, bank)
	got := sameCheckedRead(t, bank, checked)
	if got.FromChecked != got.Files.NumFiles() {
		t.Fatalf("%d of %d files built from checked keys", got.FromChecked, got.Files.NumFiles())
	}
	// Files the bank and the calculator share (the vocabulary) are built
	// from the bank's keys; the calculator's own are checked.
	if got := sameCheckedRead(t, calculator, checked); got.FromChecked == 0 || got.FromChecked == got.Files.NumFiles() {
		t.Fatalf("the calculator built %d of %d files from the bank's keys", got.FromChecked, got.Files.NumFiles())
	}
	if got := sameCheckedRead(t, bank, nil); got.FromChecked != 0 {
		t.Fatalf("%d files built from no keys", got.FromChecked)
	}
}

func TestACheckedKeyVouchesOnlyForTheBytesAndImportsItWasComputedFrom(t *testing.T) {
	built := buildtest.Build(t, "../../examples/calculator/proto").Bytes
	checked := checkedOf(t, built)
	inputs := changedFiles(t, built)
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) { sameCheckedRead(t, data, checked) })
	}
	// Only the files that neither are the changed one nor import it,
	// directly or not, are built from checked keys.
	a := sameCheckedRead(t, inputs[vocabularyChanged], checked)
	c := new(cataloguev1.Catalogue)
	if err := proto.Unmarshal(built, c); err != nil {
		t.Fatal(err)
	}
	changed := c.GetFiles().GetFile()[0].GetName()
	var reaches func(fd protoreflect.FileDescriptor) bool
	reaches = func(fd protoreflect.FileDescriptor) bool {
		if fd.Path() == changed {
			return true
		}
		for i := range fd.Imports().Len() {
			if reaches(fd.Imports().Get(i).FileDescriptor) {
				return true
			}
		}
		return false
	}
	apart := 0
	a.Files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !reaches(fd) {
			apart++
		}
		return true
	})
	if a.FromChecked != apart || apart == a.Files.NumFiles() {
		t.Fatalf("%d files built from checked keys; %d of %d neither changed nor import what did", a.FromChecked, apart, a.Files.NumFiles())
	}
}

func TestDescriptorsBuiltFromCheckedKeysAreFilledInOnceWhenReadAtOnce(t *testing.T) {
	bank := buildtest.Build(t, "../../examples/bank/proto").Bytes
	a, err := artifact.ReadCheckedToServe(bank, nil, checkedOf(t, bank))
	if err != nil || a.FromChecked == 0 {
		t.Fatalf("%d from checked keys: %v", a.FromChecked, err)
	}
	want, err := artifact.ReadToServe(bank)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			a.Files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
				wf, err := want.Files.FindFileByPath(fd.Path())
				if err != nil || !proto.Equal(protodesc.ToFileDescriptorProto(fd), protodesc.ToFileDescriptorProto(wf)) {
					t.Errorf("%s, filled in at once: other descriptors (%v)", fd.Path(), err)
				}
				return true
			})
		})
	}
	wg.Wait()
}

func FuzzReadCheckedToServeIsReadToServe(f *testing.F) {
	built := buildtest.Build(f, "../../examples/calculator/proto").Bytes
	checked := checkedOf(f, built)
	f.Add(built)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) { sameCheckedRead(t, data, checked) })
}
