package toolbind_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/garm-dev/garm/runtime/toolbind"
)

func TestTheRefusalCodesAreTheNineTheSpecNames(t *testing.T) {
	want := []string{"400", "403", "404", "409", "415", "422", "429", "502", "504"}
	if got := toolbind.RefusalCodes(); !slices.Equal(got, want) {
		t.Fatalf("RefusalCodes() = %v, want %v", got, want)
	}
}

func TestRefusalCodesCannotBeChangedThroughTheReturnedSlice(t *testing.T) {
	codes := toolbind.RefusalCodes()
	codes[0] = "500"
	if toolbind.IsRefusalCode("500") || !toolbind.IsRefusalCode("400") {
		t.Fatal("changing the returned slice changed which codes are refusal codes")
	}
}

func TestIsRefusalCode(t *testing.T) {
	tests := []struct {
		code string
		want bool
	}{
		{"400", true}, {"403", true}, {"404", true}, {"409", true}, {"415", true},
		{"422", true}, {"429", true}, {"502", true}, {"504", true},
		{"", false}, {"500", false}, {"503", false}, {"401", false}, {"200", false},
		{" 400", false}, {"400 ", false}, {"0400", false}, {"bad_request", false},
	}
	for _, tt := range tests {
		if got := toolbind.IsRefusalCode(tt.code); got != tt.want {
			t.Errorf("IsRefusalCode(%q) = %v, want %v", tt.code, got, tt.want)
		}
	}
}

func TestEachConstructorRefusesWithItsCode(t *testing.T) {
	tests := []struct {
		name string
		make func(string) error
		code string
	}{
		{"BadRequest", toolbind.BadRequest, toolbind.CodeBadRequest},
		{"Forbidden", toolbind.Forbidden, toolbind.CodeForbidden},
		{"NotFound", toolbind.NotFound, toolbind.CodeNotFound},
		{"Conflict", toolbind.Conflict, toolbind.CodeConflict},
		{"UnsupportedMediaType", toolbind.UnsupportedMediaType, toolbind.CodeUnsupportedMediaType},
		{"UnprocessableEntity", toolbind.UnprocessableEntity, toolbind.CodeUnprocessableEntity},
		{"TooManyRequests", toolbind.TooManyRequests, toolbind.CodeTooManyRequests},
		{"BadGateway", toolbind.BadGateway, toolbind.CodeBadGateway},
		{"GatewayTimeout", toolbind.GatewayTimeout, toolbind.CodeGatewayTimeout},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		err := fmt.Errorf("wrapped: %w", tt.make("why"))
		var coded *toolbind.CodedError
		if !errors.As(err, &coded) {
			t.Errorf("%s: no CodedError in %v", tt.name, err)
			continue
		}
		if coded.Code != tt.code || coded.Message != "why" {
			t.Errorf("%s = {%q, %q}, want {%q, \"why\"}", tt.name, coded.Code, coded.Message, tt.code)
		}
		if !toolbind.IsRefusalCode(coded.Code) {
			t.Errorf("%s refuses with %q, which is not a refusal code", tt.name, coded.Code)
		}
		seen[coded.Code] = true
	}
	if len(seen) != len(toolbind.RefusalCodes()) {
		t.Errorf("constructors cover %d codes, want all %d", len(seen), len(toolbind.RefusalCodes()))
	}
}

func TestRefuseKeepsACodeOutsideTheListForTheRuntimeToClassify(t *testing.T) {
	var coded *toolbind.CodedError
	if !errors.As(toolbind.Refuse("418", "teapot"), &coded) || coded.Code != "418" || coded.Error() != "teapot" {
		t.Fatalf("Refuse(418) = %#v", coded)
	}
}

func TestANilCodedErrorPrintsWithoutPanicking(t *testing.T) {
	var coded *toolbind.CodedError
	if got := coded.Error(); got != "" {
		t.Fatalf("nil CodedError prints %q", got)
	}
}
