package listing_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/listing"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

func TestParseRequest(t *testing.T) {
	cases := []struct {
		body string
		want toolv1.Audience // 0: refused
	}{
		{"", agent},
		{"  \n\t", agent},
		{"{}", agent},
		{" { } \n", agent},
		{`{"audience":"AGENT"}`, agent},
		{`{"audience":"PERSON"}`, person},
		{`{"audience":"RUNNER"}`, runner},
		{`{"audience":"person"}`, person},
		{`{"audience":"Runner"}`, runner},
		{`{"audience":"AUDIENCE_PERSON"}`, person},
		{`{"audience":"audience_runner"}`, runner},
		{`{"audience": "Audience_Agent" }`, agent},

		{`{"audience":"AUDIENCE_UNSPECIFIED"}`, 0},
		{`{"audience":"UNSPECIFIED"}`, 0},
		{`{"audience":""}`, 0},
		{`{"audience":"robots"}`, 0},
		{`{"audience":"AUDIENCE_AUDIENCE_AGENT"}`, 0},
		{`{"audience":" AGENT"}`, 0},
		{`{"audience":"AGENT "}`, 0},
		{`{"audience":"ＡＧＥＮＴ"}`, 0},
		{`{"audience":"audıence_agent"}`, 0},
		{"{\"audience\":\"AG\xffENT\"}", 0},
		{`{"audience":1}`, 0},
		{`{"audience":2}`, 0},
		{`{"audience":null}`, 0},
		{`{"audience":true}`, 0},
		{`{"audience":["AGENT"]}`, 0},
		{`{"audience":{"name":"AGENT"}}`, 0},
		{`{"audience":"AGENT","audience":"PERSON"}`, 0},
		{`{"Audience":"AGENT"}`, 0},
		{`{"audience":"AGENT","verbose":true}`, 0},
		{`{"tools":[]}`, 0},
		{`{"audience":"AGENT"}{}`, 0},
		{`{"audience":"AGENT"} x`, 0},
		{`{}{}`, 0},
		{`{"audience":"AGENT",}`, 0},
		{`{"audience":"AGENT"`, 0},
		{`{"audience"}`, 0},
		{`[]`, 0},
		{`"AGENT"`, 0},
		{`null`, 0},
		{`AGENT`, 0},
		{"\x00", 0},
		{"\xff\xfe{}", 0},
	}
	for _, tc := range cases {
		got, err := listing.ParseRequest([]byte(tc.body))
		if tc.want == 0 {
			var d *deny.Denied
			if !errors.As(err, &d) || d.Code != deny.InvalidArgument {
				t.Errorf("%q: got %v, %v; want an invalid_argument refusal", tc.body, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %v, %v; want %v", tc.body, got, err, tc.want)
		}
	}
}

func TestARefusedListingRequestNeverEchoesTheBody(t *testing.T) {
	for _, body := range []string{`{"audience":"secret-value"}`, `{"secret-key":1}`, `secret-bytes`} {
		_, err := listing.ParseRequest([]byte(body))
		var d *deny.Denied
		if !errors.As(err, &d) {
			t.Fatalf("%q was not refused", body)
		}
		if strings.Contains(d.Detail, "secret") {
			t.Errorf("the detail %q echoes the request", d.Detail)
		}
	}
}
