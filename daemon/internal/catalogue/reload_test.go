package catalogue_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// edit replaces every old in the file at path (under the contract's
// directory) with new.
type edit struct{ path, old, new string }

// reloadContract builds a small contract, edited: a taxonomy, the packages
// of cataloguetest.WriteLarge, and a shared package (common.v1) that only
// load0.v1 imports, its answers holding a common.v1.Note.
func reloadContract(t *testing.T, edits ...edit) []byte {
	t.Helper()
	dir := t.TempDir()
	cataloguetest.WriteLarge(t, dir, 3, 2)
	writeFile(t, filepath.Join(dir, "common/v1/common.proto"), commonProto)
	edits = append([]edit{
		{"load0/v1/load.proto", "import \"garm/tool/v1/tool.proto\";\n", "import \"garm/tool/v1/tool.proto\";\nimport \"common/v1/common.proto\";\n"},
		{"load0/v1/load.proto", "  repeated string tags = 3;\n", "  repeated string tags = 3;\n  // A note.\n  common.v1.Note note = 4;\n"},
	}, edits...)
	for _, e := range edits {
		path := filepath.Join(dir, e.path)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), e.old) {
			t.Fatalf("%s holds no %q", e.path, e.old)
		}
		writeFile(t, path, strings.ReplaceAll(string(src), e.old, e.new))
	}
	return cataloguetest.Build(t, dir)
}

const commonProto = `syntax = "proto3";
package common.v1;
import "garm/tool/v1/tool.proto";
// Note is a remark.
message Note {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_INTERNAL};
  // Its text.
  optional string text = 1;
}
`

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// loadServing loads and mounts data as garmd does before serving it.
func loadServing(t *testing.T, data []byte) *catalogue.Generation {
	t.Helper()
	g, err := catalogue.Load(data, catalogue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := catalogue.Mount(g, catalogue.Steps{}); err != nil {
		t.Fatal(err)
	}
	return g
}

// reload reloads data over serving and mounts it, and checks that the
// generation is the one a fresh Load of data builds.
func reload(t *testing.T, data []byte, serving *catalogue.Generation) *catalogue.Generation {
	t.Helper()
	g, err := catalogue.Reload(data, catalogue.Options{}, serving)
	if err != nil {
		t.Fatal(err)
	}
	if err := catalogue.Mount(g, catalogue.Steps{}); err != nil {
		t.Fatal(err)
	}
	sameGeneration(t, g, loadServing(t, data))
	return g
}

// sameGeneration fails t unless got and want hold the same tools with the
// same descriptors, policies and plans.
func sameGeneration(t *testing.T, got, want *catalogue.Generation) {
	t.Helper()
	if got.Digest != want.Digest || len(got.Tools) != len(want.Tools) {
		t.Fatalf("reloaded %s with %d tools, want %s with %d", got.Digest, len(got.Tools), want.Digest, len(want.Tools))
	}
	for i, g := range got.Tools {
		w := want.Tools[i]
		if g.FQN != w.FQN || g.Method != w.Method || !proto.Equal(g.Policy, w.Policy) ||
			!proto.Equal(g.InputPlan, w.InputPlan) || !proto.Equal(g.OutputPlan, w.OutputPlan) {
			t.Fatalf("tool %s differs from a fresh load's %s", g.FQN, w.FQN)
		}
		for _, pair := range [][2]protoreflect.MessageDescriptor{{g.Input, w.Input}, {g.Output, w.Output}} {
			gf, wf := protodesc.ToFileDescriptorProto(pair[0].ParentFile()), protodesc.ToFileDescriptorProto(pair[1].ParentFile())
			if pair[0].FullName() != pair[1].FullName() || !proto.Equal(gf, wf) {
				t.Fatalf("tool %s: descriptors of %s differ from a fresh load's", g.FQN, pair[0].FullName())
			}
		}
	}
}

// toolNamed is g's tool of the given short name.
func toolNamed(t *testing.T, g *catalogue.Generation, name string) *call.Tool {
	t.Helper()
	for _, tool := range g.Tools {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// filesOf are the descriptor files g's tools are declared in, by path.
func filesOf(g *catalogue.Generation) map[string]protoreflect.FileDescriptor {
	out := map[string]protoreflect.FileDescriptor{}
	for _, tool := range g.Tools {
		out[tool.Input.ParentFile().Path()] = tool.Input.ParentFile()
	}
	return out
}

func TestAReloadOfTheSameBytesReusesEveryFile(t *testing.T) {
	data := reloadContract(t)
	serving := loadServing(t, data)
	g := reload(t, data, serving)
	for path, fd := range filesOf(g) {
		if filesOf(serving)[path] != fd {
			t.Errorf("%s was built again", path)
		}
	}
	if n := catalogue.ReusedFiles(g); n == 0 || n != catalogue.ReusedFiles(reload(t, data, g)) {
		t.Fatalf("reused %d files", n)
	}
}

func TestAReloadRebuildsAChangedFileAndOnlyIt(t *testing.T) {
	serving := loadServing(t, reloadContract(t))
	// load2's requests now allow ids of at most 8 characters.
	g := reload(t, reloadContract(t, edit{"load2/v1/load.proto", "max_len: 64", "max_len: 8"}), serving)
	before, after := filesOf(serving), filesOf(g)
	for path, fd := range after {
		if reused := before[path] == fd; reused != (path != "load2/v1/load.proto") {
			t.Errorf("%s: reused %v", path, reused)
		}
	}
	// The tool model of an unchanged package is serving's; a changed one's
	// is read again.
	if toolNamed(t, g, "load1_tool0").Policy != toolNamed(t, serving, "load1_tool0").Policy ||
		toolNamed(t, g, "load2_tool0").Policy == toolNamed(t, serving, "load2_tool0").Policy {
		t.Error("the tool model was not taken exactly where the files were")
	}
	// The rule served is the new one.
	msg := cataloguetest.Message(t, toolNamed(t, g, "load2_tool0").Input, `{"id": "123456789", "limit": 1}`)
	if err := g.Validator().Validate(msg); err == nil {
		t.Fatal("a nine-character id passed the rule that allows eight")
	}
}

func TestAFileWhoseImportChangedIsBuiltAgainThoughItsBytesAreTheSame(t *testing.T) {
	serving := loadServing(t, reloadContract(t))
	// common.v1.Note gains a field; load0's file, which imports it, is
	// byte for byte what it was.
	g := reload(t, reloadContract(t, edit{"common/v1/common.proto", "  optional string text = 1;\n", "  optional string text = 1;\n  // Who wrote it.\n  optional string author = 2;\n"}), serving)
	before, after := filesOf(serving), filesOf(g)
	if before["load0/v1/load.proto"] == after["load0/v1/load.proto"] {
		t.Fatal("load0's file was reused though the file it imports changed")
	}
	if before["load1/v1/load.proto"] != after["load1/v1/load.proto"] {
		t.Fatal("load1's file, unchanged and not importing common, was built again")
	}
	note := toolNamed(t, g, "load0_tool0").Output.Fields().ByName("note").Message()
	if note.Fields().ByName("author") == nil {
		t.Fatal("load0's answers hold the old common.v1.Note")
	}
}

func TestAForgedFileOfTheSameNameIsNotReused(t *testing.T) {
	// The forged artifact keeps every name, and its descriptor hashes
	// (the wire shape, which excludes policy) match the serving ones: only
	// the tool's clearance, inside the file's bytes, differs.
	serving := loadServing(t, reloadContract(t))
	forged := reloadContract(t, edit{"load1/v1/load.proto", "name: \"load1_tool1\" description: \"Looks up record 1.\" verb: VERB_READ min_clearance: CLEARANCE_INTERNAL", "name: \"load1_tool1\" description: \"Looks up record 1.\" verb: VERB_READ min_clearance: CLEARANCE_PUBLIC"})
	g := reload(t, forged, serving)
	was, is := toolNamed(t, serving, "load1_tool1"), toolNamed(t, g, "load1_tool1")
	if was.DescriptorHash != is.DescriptorHash {
		t.Fatal("the forgery changed the wire shape; it proves nothing")
	}
	if is.Input.ParentFile() == was.Input.ParentFile() || is.MinClearance != toolv1.Clearance_CLEARANCE_PUBLIC {
		t.Fatalf("the forged file was reused: it serves clearance %v", is.MinClearance)
	}
}

func TestARefusedReloadLeavesNothingToReuse(t *testing.T) {
	data := reloadContract(t)
	serving := loadServing(t, reloadContract(t, edit{"load2/v1/load.proto", "max_len: 64", "max_len: 8"}))
	if g, err := catalogue.Reload(data, catalogue.Options{MaxTools: 1}, serving); err == nil {
		t.Fatalf("reloaded %d tools past --max-tools 1", len(g.Tools))
	}
	// Only what serving was built from is reused: load2's file, built by
	// the refused reload, is built again.
	g := reload(t, data, serving)
	if before, after := filesOf(serving), filesOf(g); before["load2/v1/load.proto"] == after["load2/v1/load.proto"] || before["load1/v1/load.proto"] != after["load1/v1/load.proto"] {
		t.Fatal("the reload reused what it should not, or did not reuse what it should")
	}
}

func TestAReloadRefusesWhatALoadRefuses(t *testing.T) {
	serving := loadServing(t, reloadContract(t))
	bad := reloadContract(t, edit{"load1/v1/load.proto", "max_len: 64", "max_len: 8"})
	bad = append(bad[:len(bad)/2:len(bad)/2], 0xff) // truncated
	if _, err := catalogue.Reload(bad, catalogue.Options{}, serving); err == nil {
		t.Fatal("a truncated artifact reloaded")
	}
}

func TestAReloadWritesNothingTheServingGenerationHolds(t *testing.T) {
	// Under -race: calls read the serving generation's plans and
	// validator while reloads over it take them.
	data := reloadContract(t)
	serving := loadServing(t, data)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, tool := range serving.Tools {
				for _, r := range tool.InputPlan.GetRules() {
					_ = r.GetOnDeny().GetOmit()
				}
				_ = serving.Validator().Validate(dynamicpb.NewMessage(tool.Input))
			}
		}
	}()
	for range 3 {
		reload(t, data, serving)
	}
	close(stop)
	<-stopped
}

// FuzzReloadIsLoad holds a reload over a serving generation to a load of
// the same bytes: the same acceptance, the same tools with the same
// descriptors, policies and plans, and the same mount.
func FuzzReloadIsLoad(f *testing.F) {
	calculator := cataloguetest.Calculator(f)
	f.Add(calculator)
	f.Add(cataloguetest.Build(f, taxonomyFixture))
	f.Add([]byte{})
	serving, err := catalogue.Load(calculator, catalogue.Options{})
	if err != nil {
		f.Fatal(err)
	}
	if err := catalogue.Mount(serving, catalogue.Steps{}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := catalogue.Load(data, catalogue.Options{})
		got, gotErr := catalogue.Reload(data, catalogue.Options{}, serving)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("Load: %v; Reload: %v", wantErr, gotErr)
		}
		if wantErr != nil {
			return
		}
		sameGeneration(t, got, want)
		wantErr, gotErr = catalogue.Mount(want, catalogue.Steps{}), catalogue.Mount(got, catalogue.Steps{})
		if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
			t.Fatalf("Mount after Load: %v; after Reload: %v", wantErr, gotErr)
		}
	})
}

func TestAReloadedGenerationDoesNotKeepTheOneItReplaced(t *testing.T) {
	data := reloadContract(t)
	serving := loadServing(t, data)
	collected := make(chan struct{})
	runtime.SetFinalizer(serving, func(*catalogue.Generation) { close(collected) })
	next := reload(t, data, serving)
	if catalogue.ReusedFiles(next) == 0 {
		t.Fatal("nothing was reused; the test proves nothing")
	}
	serving = nil
	for range 10 {
		runtime.GC()
		select {
		case <-collected:
			runtime.KeepAlive(next)
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatal("the replaced generation is still reachable from the one that replaced it")
}
