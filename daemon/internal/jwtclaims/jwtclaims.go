package jwtclaims

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
)

// Object is a JSON object's members, exactly as spelled.
type Object map[string]json.RawMessage

// AsObject is raw's members when raw is a JSON object.
func AsObject(raw []byte) (Object, error) {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errors.New("not an object")
	}
	var o Object
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, err
	}
	return o, nil
}

// String is raw as a JSON string; name names the claim in the error.
func String(raw json.RawMessage, name string) (string, error) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("claim %s is not a string", name)
	}
	return s, nil
}

// List is raw as a JSON array of strings; name names the claim in the
// error.
func List(raw json.RawMessage, name string) ([]string, error) {
	var items []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, fmt.Errorf("claim %s is not an array of strings", name)
	}
	out := make([]string, len(items))
	for i, item := range items {
		s, err := String(item, name)
		if err != nil {
			return nil, fmt.Errorf("claim %s is not an array of strings", name)
		}
		out[i] = s
	}
	return out, nil
}

// Audience is o's aud, a string or an array of strings; it is required.
func Audience(o Object) ([]string, error) {
	raw, ok := o["aud"]
	if !ok {
		return nil, errors.New("claim aud is missing")
	}
	if len(raw) > 0 && raw[0] == '"' {
		s, err := String(raw, "aud")
		return []string{s}, err
	}
	aud, err := List(raw, "aud")
	if err != nil {
		return nil, errors.New("claim aud is neither a string nor an array of strings")
	}
	return aud, nil
}

// maxNumericDate is the last second of year 9999: later dates are refused
// rather than overflowed.
const maxNumericDate = 253402300799

// NumericDate is a JWT NumericDate: seconds since the epoch, a JSON number,
// possibly fractional, never negative. Its errors ("not a number", "not a
// date") are for the caller to put after the claim's name.
func NumericDate(raw json.RawMessage) (time.Time, error) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return time.Time{}, errors.New("not a number")
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > maxNumericDate {
		return time.Time{}, errors.New("not a date")
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
}

// Clearance reads a clearance, bare or CLEARANCE_-prefixed, in any ASCII
// case; unspecified is not a clearance.
// It is [wire.ParseClearance].
func Clearance(s string) (toolv1.Clearance, bool) { return wire.ParseClearance(s) }

// EnumValue looks s up in an enum's value map: [wire.EnumValue], the one
// reading of an enum claim that garmd and the approvals service share.
func EnumValue(s, prefix string, values map[string]int32) (int32, bool) {
	return wire.EnumValue(s, prefix, values)
}
