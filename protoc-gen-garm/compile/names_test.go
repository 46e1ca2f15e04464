package compile_test

import (
	"testing"

	"github.com/garm-dev/garm/protoc-gen-garm/compile"
)

func TestDefaultToolName(t *testing.T) {
	for _, tc := range []struct {
		method string
		want   string
	}{
		{"Add", "add"},
		{"X", "x"},
		{"GetThing", "get_thing"},
		{"getThing", "get_thing"},
		{"GetHTTPStatus", "get_http_status"},
		{"GetURL", "get_url"},
		{"HTTPGet", "http_get"},
		{"HTTP", "http"},
		{"ABTest", "ab_test"},
		{"ListV2Items", "list_v2_items"},
		{"Base64Encode", "base64_encode"},
		{"HTTP2Server", "http2_server"},
		{"GetV2", "get_v2"},
		{"A1B2", "a1_b2"},
		// A capital followed by a lower-case letter starts a word, so the
		// "v" of a mixed-case acronym splits it: the rule as design 3.1 states
		// it, pinned so that a change to a tool's FQN is deliberate.
		{"IPv6Address", "i_pv6_address"},
		{"already_snake", "already_snake"},
		{"Get_Thing", "get_thing"},
		{"Get_thing", "get_thing"},
		{"get_HTTPStatus", "get_http_status"},
		{"Mixed_Case_Name", "mixed_case_name"},
		// Underscores separate words and never make an empty one: a run of
		// them is one separator, and none leads or trails (the name must
		// start with a letter and reads badly ending in "_").
		{"Get__Thing", "get_thing"},
		{"get___thing", "get_thing"},
		{"GetThing_", "get_thing"},
		{"GetThing__", "get_thing"},
		{"_GetThing", "get_thing"},
		{"__get_thing", "get_thing"},
		{"Get_2Things", "get_2_things"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			if got := compile.DefaultToolName(tc.method); got != tc.want {
				t.Errorf("DefaultToolName(%q) = %q, want %q", tc.method, got, tc.want)
			}
		})
	}
}
