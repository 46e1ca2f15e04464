package catalogue

import (
	"context"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	"google.golang.org/protobuf/reflect/protoreflect"
)

func TestSkippingFilesThatCannotReachACardFindsWhatTheWalkFinds(t *testing.T) {
	for _, root := range []string{"testdata/mount", "../../testdata/records/proto", "../../../examples/calculator/proto"} {
		built, err := builder.FromRoots(context.Background(), root)
		if err != nil {
			t.Fatalf("%s: %v", root, err)
		}
		cards, walked, reached := cardReach{}, 0, 0
		built.Artifact.Files.RangeFiles(func(f protoreflect.FileDescriptor) bool {
			var each func(messages protoreflect.MessageDescriptors)
			each = func(messages protoreflect.MessageDescriptors) {
				for i := 0; i < messages.Len(); i++ {
					md := messages.Get(i)
					wantPath, want := reachesCard(md)
					gotPath, got := cards.reachesCard(md)
					if got != want || gotPath != wantPath {
						t.Errorf("%s: reaches a card %v at %q, the walk says %v at %q", md.FullName(), got, gotPath, want, wantPath)
					}
					walked++
					if want {
						reached++
					}
					each(md.Messages())
				}
			}
			each(f.Messages())
			return true
		})
		if root != "../../../examples/calculator/proto" && reached == 0 {
			t.Errorf("%s: no message of %d reaches a card; the test proves nothing", root, walked)
		}
	}
}
