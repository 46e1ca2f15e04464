package compile

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"github.com/invopop/jsonschema"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// validation resolves protovalidate's three option extensions, and only
// those, the way vocabulary resolves garm's.
var validation = func() *protoregistry.Types {
	types := new(protoregistry.Types)
	for _, xt := range []protoreflect.ExtensionType{validate.E_Field, validate.E_Message, validate.E_Oneof} {
		if err := types.RegisterExtension(xt); err != nil {
			panic(err)
		}
	}
	return types
}()

// readRules re-reads options against protovalidate's extensions, as
// readExtension does against garm's, and returns the extension's value, or
// nil when it is not set. A rule this build does not know (a newer
// protovalidate) is refused rather than silently left out of the schema; a
// predefined rule (an extension of a rules message, which is CEL) has no
// keyword and is skipped.
func readRules(options proto.Message, into proto.Message, xt protoreflect.ExtensionType, where string) (proto.Message, error) {
	value, err := rereadOption(options, into, validation, xt, where)
	if err != nil || value == nil {
		return nil, err
	}
	if unknown := unreadRules(value.ProtoReflect(), string(xt.TypeDescriptor().FullName())); len(unknown) > 0 {
		return nil, fmt.Errorf("%s: (%s) sets rules this build of garm cannot read (%s); upgrade protoc-gen-garm",
			where, xt.TypeDescriptor().FullName(), strings.Join(unknown, ", "))
	}
	return value, nil
}

// unreadRules lists where m or a message below it holds fields its
// descriptor neither declares nor reserves for extensions.
func unreadRules(m protoreflect.Message, path string) []string {
	var found []string
	for raw := m.GetUnknown(); len(raw) > 0; {
		num, _, n := protowire.ConsumeField(raw)
		if n < 0 {
			return append(found, path+": malformed fields")
		}
		if !m.Descriptor().ExtensionRanges().Has(num) {
			found = append(found, fmt.Sprintf("%s: field %d", path, num))
		}
		raw = raw[n:]
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() == nil || fd.IsMap() {
			return true
		}
		child := path + "." + string(fd.Name())
		if fd.IsList() {
			for i := 0; i < v.List().Len(); i++ {
				found = append(found, unreadRules(v.List().Get(i).Message(), fmt.Sprintf("%s[%d]", child, i))...)
			}
			return true
		}
		found = append(found, unreadRules(v.Message(), child)...)
		return true
	})
	return found
}

// fieldRules is a field's (buf.validate.field), or nil. A field named by one
// of its message's (buf.validate.message).oneof rules and not saying how to
// ignore gets IGNORE_IF_ZERO_VALUE, as protovalidate gives it.
func fieldRules(fd protoreflect.FieldDescriptor) (*validate.FieldRules, error) {
	var opts descriptorpb.FieldOptions
	got, err := readRules(fd.Options(), &opts, validate.E_Field, string(fd.FullName()))
	if err != nil || got == nil {
		return nil, err
	}
	rules := got.(*validate.FieldRules)
	if rules.HasIgnore() {
		return rules, nil
	}
	if md, ok := fd.Parent().(protoreflect.MessageDescriptor); ok {
		mr, err := messageRules(md)
		if err != nil {
			return nil, err
		}
		for _, group := range mr.GetOneof() {
			if slices.Contains(group.GetFields(), string(fd.Name())) {
				rules = proto.CloneOf(rules)
				rules.SetIgnore(validate.Ignore_IGNORE_IF_ZERO_VALUE)
				break
			}
		}
	}
	return rules, nil
}

func messageRules(md protoreflect.MessageDescriptor) (*validate.MessageRules, error) {
	var opts descriptorpb.MessageOptions
	got, err := readRules(md.Options(), &opts, validate.E_Message, string(md.FullName()))
	if err != nil || got == nil {
		return nil, err
	}
	return got.(*validate.MessageRules), nil
}

func oneofRules(od protoreflect.OneofDescriptor) (*validate.OneofRules, error) {
	var opts descriptorpb.OneofOptions
	got, err := readRules(od.Options(), &opts, validate.E_Oneof, string(od.FullName()))
	if err != nil || got == nil {
		return nil, err
	}
	return got.(*validate.OneofRules), nil
}

// ruleKind names which of FieldRules' typed rules are set ("string",
// "repeated", …), or "" when none are.
func ruleKind(rules *validate.FieldRules) string {
	if rules == nil {
		return ""
	}
	m := rules.ProtoReflect()
	if fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("type")); fd != nil {
		return string(fd.Name())
	}
	return ""
}

// typedRules is the message of the typed rules that are set, or nil.
func typedRules(rules *validate.FieldRules) protoreflect.Message {
	if rules == nil {
		return nil
	}
	m := rules.ProtoReflect()
	if fd := m.WhichOneof(m.Descriptor().Oneofs().ByName("type")); fd != nil {
		return m.Get(fd).Message()
	}
	return nil
}

// checkRuleKind refuses typed rules that contradict what the value is:
// protovalidate refuses them too, at its first validation.
func checkRuleKind(rules *validate.FieldRules, want, what string) error {
	got := ruleKind(rules)
	if got == "" || got == want {
		return nil
	}
	if want == "" {
		return fmt.Errorf("(buf.validate.field) sets %s rules on %s, which takes no typed rules", got, what)
	}
	return fmt.Errorf("(buf.validate.field) sets %s rules on %s, which takes %s rules", got, what, want)
}

// Patterns for protovalidate's well-known string rules whose check is a
// regular language; each is protovalidate's own check, so the schema admits
// exactly what garmd's protovalidate admits.
const (
	emailPattern    = "^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$"
	hostnameLabel   = `[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?`
	hostnamePattern = `^` + hostnameLabel + `(?:\.` + hostnameLabel + `)*\.?$`
	// The right-most label is not all digits: its last non-digit is a letter
	// or a hyphen, not the dot before it.
	hostnameLastLabel = `[a-zA-Z-][0-9]*\.?$`
	uuidPattern       = `^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	tuuidPattern      = `^[0-9a-fA-F]{32}$`
	ulidPattern       = `^[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{25}$`
	ipv4Octet         = `(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])`
	ipv4Pattern       = `^` + ipv4Octet + `\.` + ipv4Octet + `\.` + ipv4Octet + `\.` + ipv4Octet + `$`
)

func uint64p(v uint64) *uint64 { return &v }

// stringRule maps StringRules to keywords. Rules without a keyword (byte
// lengths, IP prefixes, addresses, host and port, protobuf names, header
// regexes) are left to protovalidate in garmd.
func stringRule(r *validate.StringRules) (rule *jsonschema.Schema, err error) {
	rule = &jsonschema.Schema{}
	if r == nil {
		return rule, nil
	}
	var patterns []string
	var more []*jsonschema.Schema
	if r.HasConst() {
		rule.Const = r.GetConst()
	}
	if r.HasLen() {
		rule.MinLength, rule.MaxLength = uint64p(r.GetLen()), uint64p(r.GetLen())
	}
	if r.HasMinLen() {
		rule.MinLength = uint64p(max(r.GetMinLen(), derefOr(rule.MinLength)))
	}
	if r.HasMaxLen() {
		if rule.MaxLength == nil || r.GetMaxLen() < *rule.MaxLength {
			rule.MaxLength = uint64p(r.GetMaxLen())
		}
	}
	if r.HasPattern() {
		p, err := portablePattern(r.GetPattern())
		if err != nil {
			return nil, err
		}
		patterns = append(patterns, p)
	}
	if r.HasPrefix() {
		patterns = append(patterns, "^"+regexp.QuoteMeta(r.GetPrefix()))
	}
	if r.HasSuffix() {
		patterns = append(patterns, regexp.QuoteMeta(r.GetSuffix())+"$")
	}
	if r.HasContains() {
		patterns = append(patterns, regexp.QuoteMeta(r.GetContains()))
	}
	if r.HasNotContains() {
		more = append(more, &jsonschema.Schema{Not: &jsonschema.Schema{Pattern: regexp.QuoteMeta(r.GetNotContains())}})
	}
	for _, v := range r.GetIn() {
		rule.Enum = append(rule.Enum, v)
	}
	if len(r.GetNotIn()) > 0 {
		not := &jsonschema.Schema{}
		for _, v := range r.GetNotIn() {
			not.Enum = append(not.Enum, v)
		}
		more = append(more, &jsonschema.Schema{Not: not})
	}
	switch {
	case r.GetEmail():
		rule.Format = "email"
		patterns = append(patterns, emailPattern)
	case r.GetHostname():
		rule.Format = "hostname"
		patterns = append(patterns, hostnamePattern, hostnameLastLabel)
		more = append(more, &jsonschema.Schema{AnyOf: []*jsonschema.Schema{
			{MaxLength: uint64p(253)},
			{MaxLength: uint64p(254), Pattern: `\.$`},
		}})
	case r.GetUuid():
		rule.Format = "uuid"
		patterns = append(patterns, uuidPattern)
	case r.GetTuuid():
		patterns = append(patterns, tuuidPattern)
	case r.GetUlid():
		patterns = append(patterns, ulidPattern)
	case r.GetIpv4():
		rule.Format = "ipv4"
		patterns = append(patterns, ipv4Pattern)
	case r.GetIpv6():
		rule.Format = "ipv6"
		rule.MinLength = uint64p(max(1, derefOr(rule.MinLength)))
	case r.GetUri():
		rule.Format = "uri"
		rule.MinLength = uint64p(max(1, derefOr(rule.MinLength)))
	case r.GetUriRef():
		rule.Format = "uri-reference"
	}
	for i, p := range patterns {
		if i == 0 {
			rule.Pattern = p
			continue
		}
		more = append(more, &jsonschema.Schema{Pattern: p})
	}
	if len(more) == 1 && rule.Not == nil && more[0].Not != nil {
		rule.Not = more[0].Not
	} else {
		rule.AllOf = append(rule.AllOf, more...)
	}
	for _, v := range r.GetExample() {
		rule.Examples = append(rule.Examples, v)
	}
	return rule, nil
}

func derefOr(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

// enumSchema lists the names a caller may send: every named value the rules
// admit, without the zero value unless nothing else is admitted.
func enumSchema(ed protoreflect.EnumDescriptor, r *validate.EnumRules) (*jsonschema.Schema, error) {
	if ed.FullName() == "google.protobuf.NullValue" {
		return &jsonschema.Schema{Type: "null"}, nil
	}
	admits := func(n protoreflect.EnumNumber) bool {
		if r.HasConst() && int32(n) != r.GetConst() {
			return false
		}
		if len(r.GetIn()) > 0 && !slices.Contains(r.GetIn(), int32(n)) {
			return false
		}
		return !slices.Contains(r.GetNotIn(), int32(n))
	}
	var named, zero []any
	values := ed.Values()
	for i := 0; i < values.Len(); i++ {
		v := values.Get(i)
		if !admits(v.Number()) {
			continue
		}
		if v.Number() == 0 {
			zero = append(zero, string(v.Name()))
		} else {
			named = append(named, string(v.Name()))
		}
	}
	if len(named) == 0 {
		named = zero
	}
	if len(named) == 0 {
		return nil, fmt.Errorf("no named value of %s satisfies the enum rules", ed.FullName())
	}
	s := &jsonschema.Schema{Type: "string", Enum: named}
	for _, n := range r.GetExample() {
		if v := values.ByNumber(protoreflect.EnumNumber(n)); v != nil {
			s.Examples = append(s.Examples, string(v.Name()))
		}
	}
	return s, nil
}

// absorb moves src's keywords into dst; src's win, except combinators and
// "not", which are kept side by side.
func absorb(dst, src *jsonschema.Schema) {
	if src.Const != nil {
		dst.Const = src.Const
	}
	if src.Enum != nil {
		dst.Enum = src.Enum
	}
	for _, n := range []struct{ to, from *json.Number }{
		{&dst.Minimum, &src.Minimum}, {&dst.Maximum, &src.Maximum},
		{&dst.ExclusiveMinimum, &src.ExclusiveMinimum}, {&dst.ExclusiveMaximum, &src.ExclusiveMaximum},
	} {
		if *n.from != "" {
			*n.to = *n.from
		}
	}
	for _, n := range []struct{ to, from **uint64 }{
		{&dst.MinLength, &src.MinLength}, {&dst.MaxLength, &src.MaxLength},
		{&dst.MinItems, &src.MinItems}, {&dst.MaxItems, &src.MaxItems},
		{&dst.MinProperties, &src.MinProperties}, {&dst.MaxProperties, &src.MaxProperties},
	} {
		if *n.from != nil {
			*n.to = *n.from
		}
	}
	if src.Pattern != "" {
		dst.Pattern = src.Pattern
	}
	if src.Format != "" {
		dst.Format = src.Format
	}
	if src.UniqueItems {
		dst.UniqueItems = true
	}
	if src.PropertyNames != nil {
		dst.PropertyNames = src.PropertyNames
	}
	if src.Examples != nil {
		dst.Examples = src.Examples
	}
	dst.AllOf = append(dst.AllOf, src.AllOf...)
	if src.AnyOf != nil {
		if dst.AnyOf == nil {
			dst.AnyOf = src.AnyOf
		} else {
			dst.AllOf = append(dst.AllOf, &jsonschema.Schema{AnyOf: src.AnyOf})
		}
	}
	if src.Not != nil {
		if dst.Not == nil {
			dst.Not = src.Not
		} else {
			dst.AllOf = append(dst.AllOf, &jsonschema.Schema{Not: src.Not})
		}
	}
}
