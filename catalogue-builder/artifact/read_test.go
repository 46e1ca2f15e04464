package artifact_test

import (
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/buildtest"
	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/proto"
)

const calculator = "../../examples/calculator/proto"

// tampered builds the calculator, changes its catalogue, and returns the
// bytes, written as deterministically as a build writes them.
func tampered(t *testing.T, change func(c *cataloguev1.Catalogue)) []byte {
	t.Helper()
	c := proto.Clone(buildtest.Artifact(t, calculator).Catalogue).(*cataloguev1.Catalogue)
	change(c)
	data, err := artifact.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func rule(c *cataloguev1.Catalogue, message, path string) *planv1.FieldRule {
	for _, pp := range c.GetPlans() {
		for _, mp := range pp.GetMessages() {
			if mp.GetMessage() != message {
				continue
			}
			for _, r := range mp.GetRules() {
				if r.GetPath() == path {
					return r
				}
			}
		}
	}
	panic("no rule " + message + " " + path)
}

func TestReadRefusesAnArtifactThatIsNotWhole(t *testing.T) {
	cases := []struct {
		name   string
		data   func(t *testing.T) []byte
		refuse string
	}{
		{"garbage bytes", func(*testing.T) []byte { return []byte("\xff\xff\xff\xff not a catalogue") }, "not a catalogue"},
		{"empty", func(*testing.T) []byte { return nil }, "names no annotation schema version"},
		{"newer vocabulary", func(t *testing.T) []byte {
			return tampered(t, func(c *cataloguev1.Catalogue) { c.AnnotationSchemaVersion = artifact.SchemaVersion + 1 })
		}, "upgrade this program before adopting it"},
		{"no descriptors", func(t *testing.T) []byte {
			return tampered(t, func(c *cataloguev1.Catalogue) { c.Files = nil })
		}, "holds no descriptors"},
		{"a dependency missing", func(t *testing.T) []byte {
			return tampered(t, func(c *cataloguev1.Catalogue) { c.Files.File = c.Files.File[1:] })
		}, "do not resolve on their own"},
		{"a hash that is not the descriptors'", func(t *testing.T) []byte {
			return tampered(t, func(c *cataloguev1.Catalogue) { c.DescriptorHashes["calc.v1"] = strings.Repeat("0", 64) })
		}, "recorded descriptor hash"},
		{"a hash for a package without tools", func(t *testing.T) []byte {
			return tampered(t, func(c *cataloguev1.Catalogue) { c.DescriptorHashes["other.v1"] = strings.Repeat("0", 64) })
		}, "which has no tool"},
		{"a rule with the wrong field number", func(t *testing.T) []byte {
			return tampered(t, func(c *cataloguev1.Catalogue) { rule(c, "calc.v1.AddRequest", "b").Numbers = []int32{7} })
		}, "is field 2, the rule says 7"},
		{"a rule for a field that does not exist", func(t *testing.T) []byte {
			return tampered(t, func(c *cataloguev1.Catalogue) { rule(c, "calc.v1.AddRequest", "b").Path = "c" })
		}, `has no field "c"`},
		{"a rule with the wrong container", func(t *testing.T) []byte {
			return tampered(t, func(c *cataloguev1.Catalogue) {
				rule(c, "calc.v1.AddRequest", "b").Container = planv1.Container_CONTAINER_MESSAGE
			})
		}, "the rule says CONTAINER_MESSAGE"},
		{"a field without a rule", func(t *testing.T) []byte {
			return tampered(t, func(c *cataloguev1.Catalogue) {
				mp := c.Plans[0].Messages[0]
				mp.Rules = mp.Rules[:len(mp.Rules)-1]
			})
		}, "the plan has no rule for"},
		{"a tool message without a plan", func(t *testing.T) []byte {
			return tampered(t, func(c *cataloguev1.Catalogue) { c.Plans[0].Messages = c.Plans[0].Messages[1:] })
		}, "no plan for"},
		{"a plan that belongs to no tool", func(t *testing.T) []byte {
			return tampered(t, func(c *cataloguev1.Catalogue) {
				extra := proto.Clone(c.Plans[0].Messages[0]).(*planv1.MessagePlan)
				extra.Message = "calc.v1.Unused"
				c.Plans[0].Messages = append(c.Plans[0].Messages, extra)
			})
		}, "belongs to no tool"},
		{"a compartment the taxonomy does not declare", func(t *testing.T) []byte {
			return tampered(t, func(c *cataloguev1.Catalogue) {
				rule(c, "calc.v1.AddRequest", "b").Compartments = []string{"secret"}
			})
		}, `uses compartment "secret", which the taxonomy does not declare`},
		{"a compartment declared twice", func(t *testing.T) []byte {
			return tampered(t, func(c *cataloguev1.Catalogue) {
				c.Compartments = []*toolv1.Decl{{Name: "a"}, {Name: "a"}}
			})
		}, `declares compartment "a" twice`},
		{"an attribute declared twice", func(t *testing.T) []byte {
			return tampered(t, func(c *cataloguev1.Catalogue) {
				a := &toolv1.Attribute{Name: "customer_id", Description: "Who.", Type: toolv1.Attribute_TYPE_STRING}
				c.Attributes = []*toolv1.Attribute{a, a}
			})
		}, `declares attribute "customer_id" twice`},
		{"a list attribute without a bound", func(t *testing.T) []byte {
			return tampered(t, func(c *cataloguev1.Catalogue) {
				c.Attributes = []*toolv1.Attribute{{Name: "accounts", Description: "Which.", Type: toolv1.Attribute_TYPE_STRING_LIST}}
			})
		}, `attribute "accounts": a TYPE_STRING_LIST needs max_items > 0`},
		{"a package planned twice", func(t *testing.T) []byte {
			return tampered(t, func(c *cataloguev1.Catalogue) { c.Plans = append(c.Plans, c.Plans[0]) })
		}, "appear twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := artifact.Read(tc.data(t))
			if err == nil || !strings.Contains(err.Error(), tc.refuse) {
				t.Fatalf("got %v, want a refusal containing %q", err, tc.refuse)
			}
		})
	}
}

func TestReadRefusesAnArtifactOverTheSizeCeiling(t *testing.T) {
	_, err := artifact.Read(make([]byte, artifact.MaxSize+1))
	if err == nil || !strings.Contains(err.Error(), "larger than 256 MiB") {
		t.Fatalf("got %v", err)
	}
}

func TestTheDigestIsTheSHA256OfTheBytes(t *testing.T) {
	// sha256("") is a fixed vector.
	if got := artifact.Digest(nil); got != "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatal(got)
	}
	res := buildtest.Build(t, calculator)
	if res.Artifact.Digest != artifact.Digest(res.Bytes) || res.Artifact.Size != len(res.Bytes) {
		t.Fatal("a read artifact's digest is not its bytes' digest")
	}
}

func TestAnArtifactHoldsItsDependenciesBeforeTheFilesThatImportThem(t *testing.T) {
	c := buildtest.Artifact(t, calculator).Catalogue
	seen := map[string]bool{}
	for _, f := range c.GetFiles().GetFile() {
		for _, dep := range f.GetDependency() {
			if !seen[dep] {
				t.Errorf("%s comes before its dependency %s", f.GetName(), dep)
			}
		}
		if f.GetSourceCodeInfo() != nil {
			t.Errorf("%s keeps its source information", f.GetName())
		}
		seen[f.GetName()] = true
	}
	if !seen["calc/v1/calc.proto"] || !seen["garm/tool/v1/tool.proto"] || !seen["buf/validate/validate.proto"] {
		t.Fatalf("the artifact is not self-contained: %v", seen)
	}
	if c.GetProvenance().GetBuiltAt() != nil {
		t.Error("a build that did not ask for a time recorded one")
	}
}

func FuzzRead(f *testing.F) {
	f.Add(buildtest.Build(f, calculator).Bytes)
	f.Add([]byte{})
	f.Add([]byte("\x08\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := artifact.Read(data)
		if err != nil {
			return
		}
		// Whatever reads must be whole: a digest of its bytes and tools
		// whose every message has a plan.
		if a.Digest != artifact.Digest(data) || len(a.Tools()) == 0 {
			t.Fatalf("read an artifact that is not whole: %s, %d tools", a.Digest, len(a.Tools()))
		}
	})
}
