package sources

import (
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	// The vocabulary every catalogue resolves from this binary: garm's
	// annotations, protovalidate's rules and the well-known types.
	_ "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	_ "github.com/garm-dev/garm/gen/garm/card/v1"
	_ "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	_ "github.com/garm-dev/garm/gen/garm/ledger/v1"
	_ "github.com/garm-dev/garm/gen/garm/plan/v1"
	_ "github.com/garm-dev/garm/gen/garm/tool/v1"
	_ "google.golang.org/protobuf/types/descriptorpb"
	_ "google.golang.org/protobuf/types/gofeaturespb"
	_ "google.golang.org/protobuf/types/known/anypb"
	_ "google.golang.org/protobuf/types/known/apipb"
	_ "google.golang.org/protobuf/types/known/durationpb"
	_ "google.golang.org/protobuf/types/known/emptypb"
	_ "google.golang.org/protobuf/types/known/fieldmaskpb"
	_ "google.golang.org/protobuf/types/known/sourcecontextpb"
	_ "google.golang.org/protobuf/types/known/structpb"
	_ "google.golang.org/protobuf/types/known/timestamppb"
	_ "google.golang.org/protobuf/types/known/typepb"
	_ "google.golang.org/protobuf/types/known/wrapperspb"
	_ "google.golang.org/protobuf/types/pluginpb"
)

// linkedPrefixes are the import paths that belong to the linked vocabulary.
var linkedPrefixes = []string{"garm/", "buf/validate/", "google/protobuf/"}

// IsLinkedPath reports whether an import path belongs to the vocabulary
// linked into this binary, whether or not a file exists at it.
func IsLinkedPath(path string) bool {
	for _, p := range linkedPrefixes {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// Linked is the linked vocabulary's file at an import path.
func Linked(path string) (protoreflect.FileDescriptor, bool) {
	if !IsLinkedPath(path) {
		return nil, false
	}
	fd, err := protoregistry.GlobalFiles.FindFileByPath(path)
	if err != nil {
		return nil, false
	}
	return fd, true
}
