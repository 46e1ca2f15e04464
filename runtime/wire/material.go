package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// The material digest binds an approval grant to the values a human approved
// (design 7.9). A client computes what to show the approver and the dev IdP the
// grant's material claim with these functions, and garmd recomputes the
// digest from the request it is given with the same ones, so the two sides
// cannot disagree about a value's spelling.

// Unset is the canonical text of a field that is absent, or that lies under
// an absent message, so that a grant can bind a value's absence.
const Unset = "<unset>"

// Errors MaterialText and MaterialTexts wrap; match them with errors.Is. They
// name the path but never quote a value of the request.
var (
	// ErrMaterialPath: the path names no field with a canonical text, whatever
	// the request holds — it is empty or has an empty segment, names a field
	// the message does not have, goes on through a field that is not a
	// singular message, passes through or ends at a list or map, or ends at a
	// float, double, bytes or message field. A tool declaring such a path is
	// misconfigured.
	ErrMaterialPath = errors.New("material path has no canonical text")
	// ErrMaterialValue: the request holds a value at the path that has no
	// canonical text — an enum number with no name, or a string that is
	// exactly [Unset] — or there is no request at all.
	ErrMaterialValue = errors.New("material value has no canonical text")
)

// MaterialText is the canonical text of the field at path (dotted proto field
// names, e.g. "beneficiary.iban") in req: a string as it is, a bool as true or
// false, any integer kind in decimal, an enum by its value name, and [Unset]
// when the leaf or any message on the way to it is absent.
//
// Absent means protoreflect's Has is false. For a field with presence
// (optional, a message, a oneof member, proto2) that is "never set". A proto3
// scalar or enum without presence cannot tell zero from unset on the wire, so
// Has is false for its zero value and its zero value is [Unset] too: a grant
// for amount 0 is a grant for an absent amount, exactly as the wire sees it.
//
// The path is checked against req's descriptor before any value is read, so a
// path is refused ([ErrMaterialPath]) the same way whether or not the request
// sets the fields along it. A string whose value is exactly [Unset] is refused
// ([ErrMaterialValue]), a decision beyond design 7.9: its text would be
// indistinguishable from an absent field's, so a grant approving "absent"
// could otherwise be spent by a request carrying that literal.
func MaterialText(req protoreflect.Message, path string) (string, error) {
	if req == nil {
		return "", fmt.Errorf("%w: no request message for path %q", ErrMaterialValue, path)
	}
	fields, err := materialFields(req.Descriptor(), path)
	if err != nil {
		return "", err
	}
	m := req
	for _, fd := range fields[:len(fields)-1] {
		if !m.Has(fd) {
			return Unset, nil
		}
		m = m.Get(fd).Message()
	}
	leaf := fields[len(fields)-1]
	if !m.Has(leaf) {
		return Unset, nil
	}
	return canonicalText(leaf, m.Get(leaf), path)
}

// MaterialTexts is [MaterialText] for each path, keyed by path. The first
// path that fails fails the whole set.
func MaterialTexts(req protoreflect.Message, paths []string) (map[string]string, error) {
	texts := make(map[string]string, len(paths))
	for _, path := range paths {
		text, err := MaterialText(req, path)
		if err != nil {
			return nil, err
		}
		texts[path] = text
	}
	return texts, nil
}

// MaterialDigest is "sha256:" followed by the lowercase hex SHA-256 of the
// texts sorted by path (byte order), each as one line path=value\n with the
// value escaped: a backslash as \\, a newline as \n, a carriage return as \r.
// No value can therefore end its line early or forge another.
//
// The texts are taken as given: they may come from an approver rather than a
// request, and "what was approved" is exactly what the digest must bind. A
// path is escaped the same way and "=" in it as \=, so every map of texts has
// its own pre-image; a path of proto field names contains none of these
// characters, so for real paths the line is exactly design 7.9's.
func MaterialDigest(texts map[string]string) string {
	sum := sha256.Sum256(materialPreimage(texts))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// RequestMaterialDigest is [MaterialDigest] of [MaterialTexts] of req at
// paths: what garmd compares with a grant's material claim.
func RequestMaterialDigest(req protoreflect.Message, paths []string) (string, error) {
	texts, err := MaterialTexts(req, paths)
	if err != nil {
		return "", err
	}
	return MaterialDigest(texts), nil
}

// materialPreimage is the byte string MaterialDigest hashes.
func materialPreimage(texts map[string]string) []byte {
	var b strings.Builder
	for _, path := range slices.Sorted(maps.Keys(texts)) {
		escapeMaterial(&b, path, true)
		b.WriteByte('=')
		escapeMaterial(&b, texts[path], false)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// escapeMaterial writes s with backslash, newline and CR escaped, and also "="
// when s is a path (a value runs to the end of its line, so it may hold "=").
func escapeMaterial(b *strings.Builder, s string, isPath bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '=' && isPath:
			b.WriteString(`\=`)
		default:
			b.WriteByte(c)
		}
	}
}

// materialFields resolves path against md to the fields it walks, the leaf
// last, or says why it has no canonical text. It reads no value.
func materialFields(md protoreflect.MessageDescriptor, path string) ([]protoreflect.FieldDescriptor, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: the path is empty", ErrMaterialPath)
	}
	segments := strings.Split(path, ".")
	fields := make([]protoreflect.FieldDescriptor, 0, len(segments))
	for n, segment := range segments {
		if segment == "" {
			return nil, fmt.Errorf("%w: %q has an empty segment", ErrMaterialPath, path)
		}
		fd := md.Fields().ByName(protoreflect.Name(segment))
		if fd == nil {
			return nil, fmt.Errorf("%w: %q: %s has no field %q", ErrMaterialPath, path, md.FullName(), segment)
		}
		if fd.IsList() || fd.IsMap() {
			return nil, fmt.Errorf("%w: %q: %s is a list or map, not one value", ErrMaterialPath, path, fd.Name())
		}
		fields = append(fields, fd)
		if n == len(segments)-1 {
			break
		}
		if fd.Message() == nil {
			return nil, fmt.Errorf("%w: %q goes on through %s, which is not a message", ErrMaterialPath, path, fd.Name())
		}
		md = fd.Message()
	}
	if !hasCanonicalText(fields[len(fields)-1].Kind()) {
		return nil, fmt.Errorf("%w: %q ends at a %s; a material field is a string, integer, bool or enum",
			ErrMaterialPath, path, fields[len(fields)-1].Kind())
	}
	return fields, nil
}

func hasCanonicalText(kind protoreflect.Kind) bool {
	switch kind {
	case protoreflect.StringKind, protoreflect.BoolKind, protoreflect.EnumKind,
		protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return true
	}
	return false
}

// canonicalText spells a present leaf value; fd has passed hasCanonicalText.
func canonicalText(fd protoreflect.FieldDescriptor, v protoreflect.Value, path string) (string, error) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		if v.String() == Unset {
			return "", fmt.Errorf("%w: %q holds the text that stands for an absent field", ErrMaterialValue, path)
		}
		return v.String(), nil
	case protoreflect.BoolKind:
		return strconv.FormatBool(v.Bool()), nil
	case protoreflect.EnumKind:
		ev := fd.Enum().Values().ByNumber(v.Enum())
		if ev == nil {
			return "", fmt.Errorf("%w: %q holds an enum number %s does not name", ErrMaterialValue, path, fd.Enum().FullName())
		}
		return string(ev.Name()), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return strconv.FormatUint(v.Uint(), 10), nil
	default: // the signed integer kinds
		return strconv.FormatInt(v.Int(), 10), nil
	}
}
