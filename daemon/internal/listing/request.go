package listing

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/garm-dev/garm/daemon/internal/deny"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// audiences are the names a request may ask for, without the enum prefix.
var audiences = map[string]toolv1.Audience{
	"AGENT":  toolv1.Audience_AUDIENCE_AGENT,
	"PERSON": toolv1.Audience_AUDIENCE_PERSON,
	"RUNNER": toolv1.Audience_AUDIENCE_RUNNER,
}

// ParseRequest reads a ListTools body: empty (or only white space) or {}
// asks for AGENT; {"audience": "<name>"} asks for PERSON, AGENT or RUNNER,
// case-insensitive, with or without the AUDIENCE_ prefix. Anything else —
// another key, a key twice, a value that is not one of those strings (null
// included), trailing bytes, or not JSON — is refused with
// deny.InvalidArgument. The detail names the problem, never the caller's
// bytes.
func ParseRequest(body []byte) (toolv1.Audience, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return toolv1.Audience_AUDIENCE_AGENT, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0, refuse("the listing request is not a JSON object")
	}
	audience, asked := toolv1.Audience_AUDIENCE_AGENT, false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0, refuse("the listing request is not valid JSON")
		}
		if key, _ := tok.(string); key != "audience" {
			return 0, refuse("the listing request has a key other than audience")
		}
		if asked {
			return 0, refuse("the listing request names its audience twice")
		}
		asked = true
		tok, err = dec.Token()
		if err != nil {
			return 0, refuse("the listing request is not valid JSON")
		}
		value, ok := tok.(string)
		if !ok {
			return 0, refuse("the listing request's audience is not a string")
		}
		if audience, ok = audienceNamed(value); !ok {
			return 0, refuse("the listing request asks for an audience that is not PERSON, AGENT or RUNNER")
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return 0, refuse("the listing request is not valid JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return 0, refuse("the listing request has bytes after its JSON object")
	}
	return audience, nil
}

// audienceNamed reads an audience name: ASCII only, so no case folding of
// other scripts can turn a look-alike into a name.
func audienceNamed(s string) (toolv1.Audience, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return 0, false
		}
	}
	upper := strings.ToUpper(s)
	a, ok := audiences[strings.TrimPrefix(upper, "AUDIENCE_")]
	return a, ok
}

func refuse(detail string) error { return deny.Deny(deny.InvalidArgument, detail) }
