package toolplane

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestTheBodyLimitIsExact(t *testing.T) {
	cases := []struct {
		name    string
		size    int
		chunked bool
		tooBig  bool
	}{
		{"empty", 0, false, false},
		{"at the limit", MaxBody, false, false},
		{"one byte over", MaxBody + 1, false, true},
		{"at the limit, no length given", MaxBody, true, false},
		{"over the limit, no length given", MaxBody + 1, true, true},
	}
	for _, c := range cases {
		var body io.Reader = bytes.NewReader(make([]byte, c.size))
		if c.chunked {
			body = io.MultiReader(body) // hides the length
		}
		r := httptest.NewRequest("POST", "/x", body)
		if c.chunked {
			r.ContentLength = -1
		}
		got, err := readBody(r, nil)
		if c.tooBig {
			if !errors.Is(err, errTooLarge) {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err != nil || len(got) != c.size {
			t.Errorf("%s: read %d bytes, %v", c.name, len(got), err)
		}
	}
}

func TestADeclaredLengthOverTheLimitIsRefusedUnread(t *testing.T) {
	r := httptest.NewRequest("POST", "/x", strings.NewReader("small"))
	r.ContentLength = MaxBody + 1
	if _, err := readBody(r, nil); !errors.Is(err, errTooLarge) {
		t.Fatalf("%v", err)
	}
}
