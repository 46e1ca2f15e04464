package catalogue_test

import (
	"strings"
	"testing"

	"buf.build/go/protovalidate"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
)

func TestAReloadsMountCompilesAgainOnlyTheShardsHoldingAChangedFile(t *testing.T) {
	serving := loadServing(t, reloadContract(t))
	g := reload(t, reloadContract(t, edit{"load2/v1/load.proto", "max_len: 64", "max_len: 8"}), serving)
	changed := map[protovalidate.Validator]bool{}
	for _, tool := range g.Tools {
		if tool.Package == "load2.v1" {
			changed[catalogue.ShardOf(g, tool.Input)] = true
		}
	}
	reused := 0
	for _, tool := range g.Tools {
		was, is := toolNamed(t, serving, tool.Name), catalogue.ShardOf(g, tool.Input)
		if is == nil {
			t.Fatalf("%s has no shard", tool.FQN)
		}
		switch same := catalogue.ShardOf(serving, was.Input) == is; {
		case changed[is] && same:
			t.Errorf("%s: its shard holds a changed file's inputs and was reused", tool.FQN)
		case !changed[is] && !same:
			t.Errorf("%s: its shard holds only unchanged inputs and was compiled again", tool.FQN)
		case same:
			reused++
		}
	}
	if reused == 0 {
		t.Fatal("no shard was reused; the test proves nothing")
	}
}

func TestAReloadOverAnUnmountedGenerationCompilesEveryShard(t *testing.T) {
	data := reloadContract(t)
	unmounted, err := catalogue.Load(data, catalogue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := reload(t, data, unmounted)
	if catalogue.ReusedFiles(g) == 0 {
		t.Fatal("nothing was reused")
	}
	for _, tool := range g.Tools {
		if catalogue.ShardOf(g, tool.Input) == nil {
			t.Fatalf("%s has no shard", tool.FQN)
		}
	}
}

func TestAReloadWhoseChangedFileHasARuleThatDoesNotCompileDoesNotMount(t *testing.T) {
	serving := loadServing(t, reloadContract(t))
	broken := reloadContract(t, edit{"load1/v1/load.proto", "message Tool0Request {\n", "message Tool0Request {\n  option (buf.validate.message).cel = {id: \"broken\" message: \"never compiles\" expression: \"this.nothing_here > 1\"};\n"})
	g, err := catalogue.Reload(broken, catalogue.Options{}, serving)
	if err != nil {
		t.Fatal(err)
	}
	got := problemsOf(t, catalogue.Mount(g, catalogue.Steps{}), "load1.v1.load1_tool0")
	if len(got) != 1 || !strings.HasPrefix(got[0], "tool load1.v1.load1_tool0 has validation rules on load1.v1.Tool0Request that do not compile") {
		t.Fatalf("problems %q", got)
	}
	if g.Validator() != nil {
		t.Error("a refused generation holds a validator")
	}
}
