package catalogue

import (
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	cardv1 "github.com/garm-dev/garm/gen/garm/card/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// movedCard is garm.card.v1.Card as a catalogue would carry it had
// Element.access moved from 10 to 11.
func movedCard(t *testing.T) protoreflect.MessageDescriptor {
	t.Helper()
	fdp := protodesc.ToFileDescriptorProto(cardv1.File_garm_card_v1_card_proto)
	moved := false
	for _, m := range fdp.GetMessageType() {
		for _, fd := range m.GetField() {
			if m.GetName() == "Element" && fd.GetName() == "access" {
				fd.Number = proto.Int32(11)
				moved = true
			}
		}
	}
	if !moved {
		t.Fatal("no garm.card.v1.Element.access to move")
	}
	f, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return f.Messages().ByName("Card")
}

func TestACardWhoseVocabularyMovedDoesNotMount(t *testing.T) {
	tool := &call.Tool{FQN: "shop.v1.card", Output: movedCard(t)}
	got := mountProblems(tool, Steps{})
	if len(got) != 1 || !strings.HasPrefix(got[0], "tool shop.v1.card answers with garm.card.v1.Card, which is itself a card, and the catalogue's card vocabulary is not the one garmd projects: ") {
		t.Fatalf("problems %q", got)
	}
	tool.Output = cardv1.File_garm_card_v1_card_proto.Messages().ByName("Card")
	if got := mountProblems(tool, Steps{}); len(got) != 0 {
		t.Fatalf("the vocabulary garmd was built with is refused: %q", got)
	}
}
