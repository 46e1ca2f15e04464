package garmtool_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/toolbind"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// failing is a handler that returns err.
func failing(err error) func(context.Context, proto.Message) (proto.Message, error) {
	return func(context.Context, proto.Message) (proto.Message, error) { return nil, err }
}

// answering is a handler that returns out and no error.
func answering(out proto.Message) func(context.Context, proto.Message) (proto.Message, error) {
	return func(context.Context, proto.Message) (proto.Message, error) { return out, nil }
}

func TestAResponseIsPublishedAsTheAnswer(t *testing.T) {
	h := serve(t, echoing)
	if got, err := callEcho(t, h, "hello"); err != nil || got != "hello" {
		t.Fatalf("echo answered %q, %v", got, err)
	}
}

func TestACodedErrorIsPublishedWithItsCodeAndMessage(t *testing.T) {
	h := serve(t, failing(toolbind.NotFound("no customer c-17")))
	_, err := callEcho(t, h, "x")
	wantAnswer(t, err, "404", "no customer c-17")
}

func TestAWrappedCodedErrorIsPublishedWithItsOwnCodeAndMessage(t *testing.T) {
	h := serve(t, failing(fmt.Errorf("looking up: %w", fmt.Errorf("twice: %w", toolbind.Conflict("already paid")))))
	_, err := callEcho(t, h, "x")
	wantAnswer(t, err, "409", "already paid")
}

func TestEveryRefusalCodeIsPublishedAsItIs(t *testing.T) {
	for _, code := range toolbind.RefusalCodes() {
		h := serve(t, failing(toolbind.Refuse(code, "refused with "+code)))
		_, err := callEcho(t, h, "x")
		wantAnswer(t, err, code, "refused with "+code)
	}
}

func TestACodedErrorWithoutAMessageIsPublishedWithItsCode(t *testing.T) {
	for _, message := range []string{"", "   ", "\r\n"} {
		h := serve(t, failing(&toolbind.CodedError{Code: "422", Message: message}))
		_, err := callEcho(t, h, "x")
		wantAnswer(t, err, "422", "422")
	}
}

func TestACodedErrorWithoutACodeIsAnUnclassified500(t *testing.T) {
	h := serve(t, failing(&toolbind.CodedError{Message: "forgot the code"}))
	_, err := callEcho(t, h, "x")
	wantAnswer(t, err, "500", "forgot the code")
}

func TestACodedErrorWithNeitherCodeNorMessageIsAnInternalError(t *testing.T) {
	h := serve(t, failing(&toolbind.CodedError{}))
	_, err := callEcho(t, h, "x")
	wantAnswer(t, err, "500", "internal error")
}

func TestACodedErrorWithACodeOutsideTheRefusalCodesIsAnUnclassified500(t *testing.T) {
	for _, code := range []string{"500", "503", "401", "200", "418", "bad_request", " 404"} {
		h := serve(t, failing(toolbind.Refuse(code, "with "+code)))
		_, err := callEcho(t, h, "x")
		wantAnswer(t, err, "500", "with "+code)
	}
}

func TestAnyOtherErrorIsA500WithItsText(t *testing.T) {
	h := serve(t, failing(errors.New("database unreachable")))
	_, err := callEcho(t, h, "x")
	wantAnswer(t, err, "500", "database unreachable")
}

func TestAnErrorWithoutTextIsA500InternalError(t *testing.T) {
	h := serve(t, failing(errors.New("")))
	_, err := callEcho(t, h, "x")
	wantAnswer(t, err, "500", "internal error")
}

func TestANilCodedErrorInAnErrorIsA500InternalError(t *testing.T) {
	var nilCoded *toolbind.CodedError
	h := serve(t, failing(nilCoded))
	_, err := callEcho(t, h, "x")
	wantAnswer(t, err, "500", "internal error")
}

// panicky's Error panics; printing it must not take the service down.
type panicky struct{}

func (panicky) Error() string { panic("no text for you") }

func TestAnErrorWhoseTextPanicsIsA500InternalError(t *testing.T) {
	h := serve(t, failing(panicky{}))
	_, err := callEcho(t, h, "x")
	wantAnswer(t, err, "500", "internal error")
}

func TestAnErrorMessageIsMadeToFitAHeader(t *testing.T) {
	h := serve(t, failing(toolbind.BadRequest("line one\r\nInjected: header\n\xff end")))
	_, err := callEcho(t, h, "x")
	wantAnswer(t, err, "400", "line one Injected: header \uFFFD end")

	long := strings.Repeat("é", 10_000)
	h = serve(t, failing(errors.New(long)))
	_, err = callEcho(t, h, "x")
	var coded *toolbind.CodedError
	if !errors.As(err, &coded) || coded.Code != "500" {
		t.Fatalf("a long error answered %v", err)
	}
	if len(coded.Message) > 4<<10 || !utf8.ValidString(coded.Message) || !strings.HasSuffix(coded.Message, "…") {
		t.Fatalf("a long error became %d bytes (valid UTF-8: %v)", len(coded.Message), utf8.ValidString(coded.Message))
	}
}

func TestNoResponseAndNoErrorIsA500(t *testing.T) {
	h := serve(t, answering(nil))
	_, err := callEcho(t, h, "x")
	wantAnswer(t, err, "500", "handler returned no response and no error")
}

func TestATypedNilResponseIsA500(t *testing.T) {
	var typedNil *wrapperspb.StringValue
	h := serve(t, answering(typedNil))
	_, err := callEcho(t, h, "x")
	wantAnswer(t, err, "500", "handler returned no response and no error")
}

func TestAResponseThatCannotBeMarshalledIsA500(t *testing.T) {
	// proto3 strings must be valid UTF-8; marshalling refuses this one.
	h := serve(t, answering(wrapperspb.String("\xff\xfe")))
	_, err := callEcho(t, h, "x")
	wantAnswer(t, err, "500", "response could not be marshalled")
}

func TestAnErrorWinsOverAResponseReturnedWithIt(t *testing.T) {
	h := serve(t, func(context.Context, proto.Message) (proto.Message, error) {
		return wrapperspb.String("partial"), toolbind.BadGateway("upstream failed")
	})
	_, err := callEcho(t, h, "x")
	wantAnswer(t, err, "502", "upstream failed")
}

func TestAPanickingHandlerIsAnswered500AndTheServiceKeepsServing(t *testing.T) {
	h := serve(t, func(_ context.Context, req proto.Message) (proto.Message, error) {
		if req.(*wrapperspb.StringValue).GetValue() == "boom" {
			panic("boom")
		}
		return req, nil
	})
	_, err := callEcho(t, h, "boom")
	wantAnswer(t, err, "500", "handler panicked")
	if got, err := callEcho(t, h, "still here"); err != nil || got != "still here" {
		t.Fatalf("after a panic: %q, %v", got, err)
	}
}

func TestARequestConstructorThatFailsLaterIsA500AndTheServiceKeepsServing(t *testing.T) {
	var calls atomic.Int32
	svc := garmtool.New("test", "1.0.0")
	if err := svc.Endpoint(echo, func() proto.Message {
		switch calls.Add(1) {
		case 1: // the check at registration
			return new(wrapperspb.StringValue)
		case 2:
			panic("constructor broke")
		case 3:
			var typedNil *wrapperspb.StringValue
			return typedNil
		}
		return new(wrapperspb.StringValue)
	}, echoing); err != nil {
		t.Fatal(err)
	}
	h := garmtooltest.Start(t, svc)
	for range 2 {
		_, err := callEcho(t, h, "x")
		wantAnswer(t, err, "500", "internal error")
	}
	if got, err := callEcho(t, h, "fine"); err != nil || got != "fine" {
		t.Fatalf("afterwards: %q, %v", got, err)
	}
}
