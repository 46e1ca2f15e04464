package wire_test

import (
	"slices"
	"testing"

	"github.com/garm-dev/garm/runtime/toolbind"
	"github.com/garm-dev/garm/runtime/wire"
)

// garmd reads the refusal codes from wire, tools write them with toolbind;
// the two lists are kept apart by the import rules and must never differ.
func TestWireAndToolbindAgreeOnTheRefusalCodes(t *testing.T) {
	if got, want := wire.RefusalCodes(), toolbind.RefusalCodes(); !slices.Equal(got, want) {
		t.Fatalf("wire.RefusalCodes() = %v, toolbind.RefusalCodes() = %v", got, want)
	}
	for _, code := range []string{"", "200", "401", "500", "503", "418"} {
		if wire.IsRefusalCode(code) || toolbind.IsRefusalCode(code) {
			t.Errorf("%q is a refusal code", code)
		}
	}
	codes := wire.RefusalCodes()
	codes[0] = "500"
	if wire.IsRefusalCode("500") {
		t.Error("changing the returned slice changed which codes are refusal codes")
	}
}

func TestHopNamesFollowTheSpec(t *testing.T) {
	tests := []struct{ name, got, want string }{
		{"invocation header", wire.InvocationHeader, "Garm-Invocation"},
		{"error code header", wire.ErrorCodeHeader, "Nats-Service-Error-Code"},
		{"error header", wire.ErrorHeader, "Nats-Service-Error"},
		{"identity metadata", wire.IdentityMetadata, "garm.identity"},
		{"contract version metadata", wire.ContractVersionMetadata, "garm.contract_version"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
