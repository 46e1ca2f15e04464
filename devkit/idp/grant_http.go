package idp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxGrantBody bounds the JSON body of POST /grant; a larger one is answered 413.
const MaxGrantBody = 64 << 10

func (i *IdP) serveGrant(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mediaType, _, err := mime.ParseMediaType(ct); err != nil || mediaType != "application/json" {
			http.Error(w, "the body must be application/json", http.StatusUnsupportedMediaType)
			return
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxGrantBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			http.Error(w, fmt.Sprintf("body larger than %d bytes", MaxGrantBody), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "cannot read body", http.StatusBadRequest)
		return
	}
	req, err := decodeGrantRequest(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	grant, err := i.Grant(req)
	i.answerIssued(w, "grant", grant, err)
}

// decodeGrantRequest reads the body of POST /grant strictly: one JSON object whose keys are
// exactly approver, tool, subject, task and material (case-sensitive, each at most once), the
// first four strings and material an object of strings with no path twice; null stands for an
// absent key. Anything else, invalid UTF-8 included, is refused, so what is signed is what the
// client meant rather than what a lenient decoder made of it.
func decodeGrantRequest(body []byte) (GrantRequest, error) {
	var req GrantRequest
	if !utf8.Valid(body) {
		return req, errors.New("body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := expectDelim(dec, '{'); err != nil {
		return req, err
	}
	fields := map[string]*string{"approver": &req.Approver, "tool": &req.Tool, "subject": &req.Subject, "task": &req.Task}
	seen := map[string]bool{}
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return req, err
		}
		if seen[key] {
			return req, fmt.Errorf("key %s given more than once", quoteShort(key))
		}
		seen[key] = true
		if key == "material" {
			if req.Material, err = decodeMaterial(dec); err != nil {
				return req, err
			}
			continue
		}
		field, known := fields[key]
		if !known {
			return req, fmt.Errorf("unknown key %s (want approver, tool, subject, material, task)", quoteShort(key))
		}
		tok, err := dec.Token()
		if err != nil {
			return req, malformed(err)
		}
		switch v := tok.(type) {
		case string:
			*field = v
		case nil:
		default:
			return req, fmt.Errorf("%s must be a string", key)
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return req, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return req, errors.New("malformed body: more than one JSON value")
	}
	return req, nil
}

// decodeMaterial reads the material object: path → canonical text, or null.
func decodeMaterial(dec *json.Decoder) (map[string]string, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, malformed(err)
	}
	if tok == nil {
		return nil, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("material must be an object of path to canonical text")
	}
	material := map[string]string{}
	for dec.More() {
		path, err := stringToken(dec)
		if err != nil {
			return nil, err
		}
		if _, dup := material[path]; dup {
			return nil, fmt.Errorf("material path %s given more than once", quoteShort(path))
		}
		tok, err := dec.Token()
		if err != nil {
			return nil, malformed(err)
		}
		text, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("material %s must be a string: its canonical text", quoteShort(path))
		}
		material[path] = text
	}
	return material, expectDelim(dec, '}')
}

func stringToken(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", malformed(err)
	}
	s, ok := tok.(string)
	if !ok {
		return "", errors.New("malformed body: want a string")
	}
	return s, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return malformed(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		if want == '{' {
			return errors.New("malformed body: want a JSON object")
		}
		return fmt.Errorf("malformed body: want %s", want)
	}
	return nil
}

func malformed(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("malformed body: the JSON ends early")
	}
	return errors.New("malformed body: not JSON")
}

// quoteShort quotes a key the client sent for an error line, cut so the line stays short.
func quoteShort(s string) string {
	const most = 40
	if len(s) > most {
		return strconv.Quote(strings.ToValidUTF8(s[:most], "")) + "…"
	}
	return strconv.Quote(s)
}
