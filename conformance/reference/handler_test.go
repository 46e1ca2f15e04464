package reference_test

import (
	"context"
	"errors"
	"testing"
	"time"

	conformancev1 "github.com/garm-dev/garm/conformance/gen/garm/conformance/v1"
	"github.com/garm-dev/garm/conformance/reference"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/toolbind"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/proto"
)

func TestSleepEndsAtTheContextsDeadlineAndSaysItWasCutShort(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	out, err := reference.Handler{}.Sleep(ctx, &conformancev1.SleepRequest{Millis: proto.Uint32(10_000)})
	if err != nil || !out.GetCutShort() || out.GetSleptMillis() >= 5_000 {
		t.Fatalf("Sleep = %v, %v; want cut short well before 10 s", out, err)
	}
}

func TestRefuseRefusesWithExactlyTheCodeAndMessageItWasSent(t *testing.T) {
	t.Parallel()
	_, err := reference.Handler{}.Refuse(context.Background(), &conformancev1.RefuseRequest{Code: proto.String("418"), Message: proto.String("teapot")})
	var coded *toolbind.CodedError
	if !errors.As(err, &coded) || coded.Code != "418" || coded.Message != "teapot" {
		t.Fatalf("Refuse = %v, want CodedError 418 teapot", err)
	}
}

func TestInspectReportsTheInvocationAndNoDeadlineWhenTheContextHasNone(t *testing.T) {
	t.Parallel()
	ctx := wire.WithInvocation(context.Background(), &toolv1.InvocationContext{
		CallId: "c-1", Act: []*toolv1.Act{{Subject: "outer"}, {Subject: "inner"}},
	})
	out, err := reference.Handler{}.Inspect(ctx, &conformancev1.InspectRequest{})
	if err != nil || out.GetCallId() != "c-1" || len(out.GetActSubjects()) != 2 || out.GetActSubjects()[1] != "inner" ||
		out.GetHandlerRemainingMillis() != -1 || out.GetDeadlineUnixMillis() != 0 {
		t.Fatalf("Inspect = %v, %v", out, err)
	}
}
