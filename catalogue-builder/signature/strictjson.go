package signature

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// maxJSONDepth bounds how deeply any document this package reads may nest;
// none of them needs more than four levels.
const maxJSONDepth = 8

// checkJSON refuses a document that is not exactly one JSON value, that
// nests deeper than maxJSONDepth, or that holds an object with a member
// named twice. encoding/json keeps the last of two equal names silently, so
// two readers of the same bytes could disagree on what they say.
func checkJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	// One frame per open object or array; an object frame holds the names
	// it has seen and whether a name comes next.
	type frame struct {
		seen     map[string]bool // nil for an array
		nameNext bool
	}
	var stack []*frame
	values := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("not JSON: %w", err)
		}
		if len(stack) == 0 {
			if values++; values > 1 {
				return errors.New("more than one JSON value")
			}
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if len(stack) > 0 {
			top := stack[len(stack)-1]
			if top.seen != nil && top.nameNext {
				name, _ := tok.(string) // the decoder yields only strings here
				if top.seen[name] {
					return fmt.Errorf("the member %s appears twice in one object", clip(name))
				}
				top.seen[name] = true
				top.nameNext = false
				continue
			}
			if top.seen != nil {
				top.nameNext = true
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{seen: map[string]bool{}, nameNext: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		}
		if len(stack) > maxJSONDepth {
			return fmt.Errorf("nested deeper than %d levels", maxJSONDepth)
		}
	}
	if values == 0 {
		return errors.New("not JSON: empty")
	}
	return nil
}

// members decodes one JSON object into its members and refuses it unless
// it has every name in required, and no name outside required and optional.
// Names are compared exactly: encoding/json would also take "PayloadType"
// for "payloadType".
func members(data []byte, required, optional []string) (map[string]json.RawMessage, error) {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	allowed := map[string]bool{}
	for _, n := range required {
		allowed[n] = true
		if _, ok := m[n]; !ok {
			return nil, fmt.Errorf("the member %q is missing", n)
		}
	}
	for _, n := range optional {
		allowed[n] = true
	}
	var extra []string
	for n := range m {
		if !allowed[n] {
			extra = append(extra, clip(n))
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return nil, fmt.Errorf("unknown members %s", strings.Join(extra, ", "))
	}
	return m, nil
}

// jsonString decodes one member that must be a JSON string.
func jsonString(m map[string]json.RawMessage, name string) (string, error) {
	raw, ok := m[name]
	if !ok {
		return "", nil
	}
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '"' {
		return "", fmt.Errorf("the member %q is not a string", name)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("the member %q: %w", name, err)
	}
	return s, nil
}

// clip shortens a value read from an untrusted document before it goes
// into an error message.
func clip(s string) string {
	const max = 64
	if len(s) > max {
		return strconv.Quote(s[:max]) + "…"
	}
	return strconv.Quote(s)
}
