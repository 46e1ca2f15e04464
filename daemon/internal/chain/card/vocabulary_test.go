package card_test

import (
	"errors"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/card"
	"github.com/garm-dev/garm/daemon/internal/deny"
	cardv1 "github.com/garm-dev/garm/gen/garm/card/v1"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

func TestTheCardVocabularyGarmdShipsPasses(t *testing.T) {
	if err := card.CheckVocabulary((&cardv1.Card{}).ProtoReflect().Descriptor()); err != nil {
		t.Errorf("the compiled vocabulary: %v", err)
	}
	if err := card.CheckVocabulary(tool(t, "get_card").Output); err != nil {
		t.Errorf("the vocabulary a built catalogue carries: %v", err)
	}
}

func TestCheckVocabularyRefusesWhatIsNotACard(t *testing.T) {
	if err := card.CheckVocabulary(nil); err == nil {
		t.Error("CheckVocabulary(nil) passed")
	}
	if err := card.CheckVocabulary((&cardv1.Element{}).ProtoReflect().Descriptor()); err == nil {
		t.Error("CheckVocabulary(garm.card.v1.Element) passed")
	}
}

// movedVocabulary is garm/card/v1/card.proto with one change applied to its
// descriptor, as a catalogue built against a drifted copy would carry it.
func movedVocabulary(tb testing.TB, change func(*descriptorpb.FileDescriptorProto)) protoreflect.MessageDescriptor {
	tb.Helper()
	fdp := protodesc.ToFileDescriptorProto(cardv1.File_garm_card_v1_card_proto)
	change(fdp)
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		tb.Fatalf("building the moved vocabulary: %v", err)
	}
	return fd.Messages().ByName("Card")
}

// field is message.field of fdp, to change.
func field(tb testing.TB, fdp *descriptorpb.FileDescriptorProto, message, name string) *descriptorpb.FieldDescriptorProto {
	tb.Helper()
	for _, m := range fdp.GetMessageType() {
		if m.GetName() != message {
			continue
		}
		for _, f := range m.GetField() {
			if f.GetName() == name {
				return f
			}
		}
	}
	tb.Fatalf("card.proto has no %s.%s", message, name)
	return nil
}

func TestCheckVocabularyRefusesAVocabularyThatHasMoved(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(tb testing.TB, fdp *descriptorpb.FileDescriptorProto)
		want   string
	}{
		{"Card.access renumbered", func(tb testing.TB, fdp *descriptorpb.FileDescriptorProto) {
			field(tb, fdp, "Card", "access").Number = proto.Int32(11)
		}, "garm.card.v1.Card has no field 10; garmd reads garm.card.v1.Label access = 10"},
		{"Card.body made singular", func(tb testing.TB, fdp *descriptorpb.FileDescriptorProto) {
			field(tb, fdp, "Card", "body").Label = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
		}, "garm.card.v1.Card field 5 is garm.card.v1.Element body; garmd reads repeated garm.card.v1.Element body = 5"},
		{"Element.access holding a Disclosure", func(tb testing.TB, fdp *descriptorpb.FileDescriptorProto) {
			field(tb, fdp, "Element", "access").TypeName = proto.String(".garm.card.v1.Disclosure")
		}, "garm.card.v1.Element field 10 is garm.card.v1.Disclosure access; garmd reads garm.card.v1.Label access = 10"},
		{"Fact.field made bytes", func(tb testing.TB, fdp *descriptorpb.FileDescriptorProto) {
			field(tb, fdp, "Fact", "field").Type = descriptorpb.FieldDescriptorProto_TYPE_BYTES.Enum()
		}, "garm.card.v1.Fact field 3 is bytes field; garmd reads string field = 3"},
		{"Fact.access swapped with Fact.field", func(tb testing.TB, fdp *descriptorpb.FileDescriptorProto) {
			field(tb, fdp, "Fact", "access").Number = proto.Int32(3)
			field(tb, fdp, "Fact", "field").Number = proto.Int32(4)
		}, "garm.card.v1.Fact field 3 is garm.card.v1.Label access; garmd reads string field = 3"},
		{"Choice.access renumbered", func(tb testing.TB, fdp *descriptorpb.FileDescriptorProto) {
			field(tb, fdp, "Choice", "access").Number = proto.Int32(4)
		}, "garm.card.v1.Choice has no field 3; garmd reads garm.card.v1.Label access = 3"},
		{"Section.elements renumbered", func(tb testing.TB, fdp *descriptorpb.FileDescriptorProto) {
			field(tb, fdp, "Section", "elements").Number = proto.Int32(3)
		}, "garm.card.v1.Section has no field 2; garmd reads repeated garm.card.v1.Element elements = 2"},
		{"Input.choice renumbered", func(tb testing.TB, fdp *descriptorpb.FileDescriptorProto) {
			field(tb, fdp, "Input", "choice").Number = proto.Int32(9)
		}, "garm.card.v1.Input has no field 8; garmd reads garm.card.v1.ChoiceInput choice = 8"},
		{"Label.clearance made an int32", func(tb testing.TB, fdp *descriptorpb.FileDescriptorProto) {
			f := field(tb, fdp, "Label", "clearance")
			f.Type, f.TypeName = descriptorpb.FieldDescriptorProto_TYPE_INT32.Enum(), nil
		}, "garm.card.v1.Label field 1 is int32 clearance; garmd reads garm.tool.v1.Clearance clearance = 1"},
		{"Label.clearance holding another enum", func(tb testing.TB, fdp *descriptorpb.FileDescriptorProto) {
			field(tb, fdp, "Label", "clearance").TypeName = proto.String(".garm.card.v1.Kind")
		}, "garm.card.v1.Label field 1 is garm.card.v1.Kind clearance; garmd reads garm.tool.v1.Clearance clearance = 1"},
		{"Label.compartments made singular", func(tb testing.TB, fdp *descriptorpb.FileDescriptorProto) {
			field(tb, fdp, "Label", "compartments").Label = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
		}, "garm.card.v1.Label field 2 is string compartments; garmd reads repeated string compartments = 2"},
		{"Disclosure.withheld_fields renumbered", func(tb testing.TB, fdp *descriptorpb.FileDescriptorProto) {
			field(tb, fdp, "Disclosure", "withheld_fields").Number = proto.Int32(2)
		}, "garm.card.v1.Disclosure has no field 1; garmd reads repeated string withheld_fields = 1"},
		{"FactSet.facts renumbered", func(tb testing.TB, fdp *descriptorpb.FileDescriptorProto) {
			field(tb, fdp, "FactSet", "facts").Number = proto.Int32(2)
		}, "garm.card.v1.FactSet has no field 1; garmd reads repeated garm.card.v1.Fact facts = 1"},
		{"ChoiceInput.choices renumbered", func(tb testing.TB, fdp *descriptorpb.FileDescriptorProto) {
			field(tb, fdp, "ChoiceInput", "choices").Number = proto.Int32(2)
		}, "garm.card.v1.ChoiceInput has no field 1; garmd reads repeated garm.card.v1.Choice choices = 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			moved := movedVocabulary(t, func(fdp *descriptorpb.FileDescriptorProto) { tc.change(t, fdp) })
			err := card.CheckVocabulary(moved)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("CheckVocabulary = %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestProjectFailsRatherThanMisreadAMovedVocabulary(t *testing.T) {
	moved := movedVocabulary(t, func(fdp *descriptorpb.FileDescriptorProto) {
		field(t, fdp, "Card", "access").Number = proto.Int32(11)
	})
	tl := &call.Tool{
		FQN:        "cardfix.v1.moved",
		Output:     moved,
		OutputPlan: &planv1.MessagePlan{Message: string(moved.FullName())},
		CardFloor:  call.Label{Clearance: internal},
	}
	resp := dynamicpb.NewMessage(moved)
	_, err := card.Project(tl, shapeOf(t, restricted), numbering(t), resp)
	if err == nil {
		t.Fatal("Project read a card whose vocabulary has moved")
	}
	if f := (*deny.Failed)(nil); errors.As(err, &f) {
		t.Fatalf("Project = %v: a moved vocabulary is garmd's failure, not an invalid card", err)
	}
	if kind, _ := deny.Detail(err); kind != "internal" {
		t.Fatalf("Project = %v, want an internal failure", err)
	}
}
