package toolservice

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

// judgeAnswer checks an answer to a call against the case's expectation.
func judgeAnswer(c Case, a answer) error {
	e := c.Expect
	switch {
	case e.Code != "":
		if a.code != e.Code {
			return fmt.Errorf("want error %s, got %s", e.Code, a)
		}
		if e.Message != nil && a.message != *e.Message {
			return fmt.Errorf("want message %q, got %q", *e.Message, a.message)
		}
		if e.MessageNonEmpty && a.message == "" {
			return fmt.Errorf("want a message with error %s, got none", e.Code)
		}
		return nil
	case e.RefusedOrUnserved:
		if a.code == "503" || a.noResponders || a.timedOut {
			return nil
		}
		return fmt.Errorf("want 503, no responders or no answer, got %s", a)
	case e.WithinMillis > 0:
		if a.code != "" || a.noResponders || a.timedOut {
			return fmt.Errorf("want a response, got %s", a)
		}
		if a.elapsed.Milliseconds() > int64(e.WithinMillis) {
			return fmt.Errorf("want a response within %d ms, got one after %d ms", e.WithinMillis, a.elapsed.Milliseconds())
		}
		return nil
	case e.Response != nil:
		if a.code != "" || a.noResponders || a.timedOut {
			return fmt.Errorf("want a response, got %s", a)
		}
		md, err := method(c.Send.Tool)
		if err != nil {
			return err
		}
		out := dynamicpb.NewMessage(md.Output())
		if err := proto.Unmarshal(a.body, out); err != nil {
			return fmt.Errorf("the response does not unmarshal into %s: %v", md.Output().FullName(), err)
		}
		js, err := protojson.Marshal(out)
		if err != nil {
			return err
		}
		var got, want any
		if err := json.Unmarshal(js, &got); err != nil {
			return err
		}
		if err := json.Unmarshal(e.Response, &want); err != nil {
			return fmt.Errorf("expected response: %w", err)
		}
		if err := subset(want, got, "response"); err != nil {
			return err
		}
		for field, r := range e.Ranges {
			n, err := number(got.(map[string]any)[field])
			if err != nil {
				return fmt.Errorf("response.%s: %v", field, err)
			}
			if n < r[0] || n > r[1] {
				return fmt.Errorf("response.%s = %d, want between %d and %d", field, n, r[0], r[1])
			}
		}
		return nil
	}
	return fmt.Errorf("the case expects nothing a call can answer")
}

// number reads a protojson number, which int64 fields spell as strings.
func number(v any) (int64, error) {
	switch n := v.(type) {
	case float64:
		return int64(n), nil
	case string:
		return strconv.ParseInt(n, 10, 64)
	case nil:
		return 0, fmt.Errorf("absent")
	}
	return 0, fmt.Errorf("%v is not a number", v)
}

// subset reports where want is not contained in got: every key of a want
// object must be in got with a value it contains; every element of a want
// array must be contained in some element of got's.
func subset(want, got any, at string) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %s", at, show(got))
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s.%s: absent, want %s", at, k, show(wv))
			}
			if err := subset(wv, gv, at+"."+k); err != nil {
				return err
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Errorf("%s: want an array, got %s", at, show(got))
		}
		for i, wv := range w {
			found := false
			for _, gv := range g {
				if subset(wv, gv, at) == nil {
					found = true
					break
				}
			}
			if !found {
				return fmt.Errorf("%s[%d]: nothing in %s contains %s", at, i, show(got), show(wv))
			}
		}
		return nil
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Errorf("%s = %s, want %s", at, show(got), show(want))
	}
	return nil
}

func show(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.TrimSpace(s)
}
