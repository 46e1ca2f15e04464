package wire_test

import (
	"encoding/base64"
	"testing"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/proto"
)

// FuzzDecodeInvocation checks that no header value panics the decoder, and
// that whatever it accepts has a call id and is exactly what encoding the
// decoded message gives back.
func FuzzDecodeInvocation(f *testing.F) {
	valid, _ := wire.EncodeInvocation(fullInvocation())
	f.Add(valid)
	f.Add("")
	f.Add("CAFj")
	f.Add("QgFj")
	f.Add("QQ==QQ==")
	f.Add("////")
	f.Add(base64.StdEncoding.EncodeToString([]byte{0x42, 0x01, 'c', 0x3a, 0x02, 0x10, 0x01}))
	f.Fuzz(func(t *testing.T, value string) {
		inv, err := wire.DecodeInvocation(value)
		if err != nil {
			if inv != nil {
				t.Fatalf("an error with an invocation: %v", inv)
			}
			return
		}
		if inv.GetCallId() == "" {
			t.Fatalf("accepted %q without a call id", value)
		}
		again, err := wire.EncodeInvocation(inv)
		if err != nil {
			t.Fatalf("accepted %q but cannot encode what it decoded: %v", value, err)
		}
		back, err := wire.DecodeInvocation(again)
		if err != nil || !proto.Equal(back, inv) {
			t.Fatalf("re-encoding %v does not decode to itself: %v", inv, err)
		}
		var _ *toolv1.InvocationContext = back
	})
}
