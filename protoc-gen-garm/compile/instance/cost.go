package instance

import (
	"fmt"
	"slices"
	"strings"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"cel.dev/cel-go/checker"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// estimator feeds CEL's static cost estimator the sizes the declarations
// give, and remembers each sized value it could not bound, with the option
// that would bound it.
type estimator struct {
	env       *Env
	target    Target
	unbounded map[string]string
}

var _ checker.CostEstimator = (*estimator)(nil)

func (s *estimator) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

func (s *estimator) EstimateSize(node checker.AstNode) *checker.SizeEstimate {
	path := node.Path()
	if len(path) == 0 {
		return nil
	}
	size, ok := s.size(path)
	if !ok {
		return nil
	}
	est := checker.SizeEstimate{Min: 0, Max: size}
	return &est
}

// size is the largest size the value at path (CEL's cost path: a variable,
// then field names and @items, @keys, @values) can have.
func (s *estimator) size(path []string) (uint64, bool) {
	root, rest := path[0], path[1:]
	switch root {
	case varSubject, varTenant, varAgent:
		return PrincipalMaxLen, true
	case varCompartments:
		if len(rest) == 0 {
			return uint64(s.env.decl.Compartments), true
		}
		return PrincipalMaxLen, true
	case "request":
		return s.fieldSize(s.target.Request, "request", rest)
	case "response", "row":
		if s.target.Answer == nil {
			return 0, false
		}
		return s.fieldSize(s.target.Answer, root, rest)
	}
	if a, ok := s.env.attrs[strings.TrimPrefix(root, attrPrefix)]; ok && strings.HasPrefix(root, attrPrefix) {
		maxLen := uint64(a.GetMaxLen())
		if maxLen == 0 {
			maxLen = DefaultMaxLen
		}
		if a.GetType() == toolv1.Attribute_TYPE_STRING_LIST && len(rest) == 0 {
			return uint64(a.GetMaxItems()), true
		}
		return maxLen, true
	}
	return 0, false
}

// fieldSize walks path from md through singular and repeated message fields
// to the sized value it ends on, and reads its protovalidate bound.
func (s *estimator) fieldSize(md protoreflect.MessageDescriptor, name string, path []string) (uint64, bool) {
	var fd protoreflect.FieldDescriptor
	element := false // at an element (@items, @values) of fd rather than fd itself
	key := false     // at a key (@keys) of fd
	for _, step := range path {
		switch step {
		case "@items", "@values":
			element = true
			continue
		case "@keys":
			key = true
			continue
		}
		if fd != nil {
			if fd.IsMap() {
				fd = fd.MapValue()
			}
			if fd.Message() == nil {
				return 0, false
			}
			md = fd.Message()
		}
		fd = md.Fields().ByName(protoreflect.Name(step))
		if fd == nil {
			return 0, false
		}
		name += "." + step
		element, key = false, false
	}
	if fd == nil {
		return 0, false
	}
	rules := s.env.fieldRules(fd)
	switch {
	case fd.IsList() && !element:
		return s.bounded(name, rules.GetRepeated().GetMaxItems(), "(buf.validate.field).repeated.max_items")
	case fd.IsMap() && !element && !key:
		return s.bounded(name, rules.GetMap().GetMaxPairs(), "(buf.validate.field).map.max_pairs")
	case fd.IsList():
		rules = rules.GetRepeated().GetItems()
	case fd.IsMap() && key:
		fd, rules = fd.MapKey(), rules.GetMap().GetKeys()
	case fd.IsMap():
		fd, rules = fd.MapValue(), rules.GetMap().GetValues()
	}
	switch fd.Kind() {
	case protoreflect.StringKind:
		return s.bounded(name, rules.GetString().GetMaxLen(), "(buf.validate.field).string.max_len")
	case protoreflect.BytesKind:
		return s.bounded(name, rules.GetBytes().GetMaxLen(), "(buf.validate.field).bytes.max_len")
	}
	return 0, false
}

func (s *estimator) bounded(name string, bound uint64, option string) (uint64, bool) {
	if bound == 0 {
		s.unbounded[name] = option
		return 0, false
	}
	return bound, true
}

// hints says what to bound, in path order.
func (s *estimator) hints() string {
	names := make([]string, 0, len(s.unbounded))
	for n := range s.unbounded {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("bound %s with %s", n, s.unbounded[n])
	}
	if len(parts) == 0 {
		return "it loops or searches over a value with no declared size"
	}
	return strings.Join(parts, "; ")
}

// validation resolves protovalidate's field rules only, as package compile
// does, so descriptors from any source are read alike.
var validation = func() *protoregistry.Types {
	types := new(protoregistry.Types)
	if err := types.RegisterExtension(validate.E_Field); err != nil {
		panic(err)
	}
	return types
}()

// fieldRules is fd's (buf.validate.field), or nil when it has none or they
// cannot be read (then no bound is known, and the rule is refused). Read once
// per field and Env.
func (e *Env) fieldRules(fd protoreflect.FieldDescriptor) *validate.FieldRules {
	if r, ok := e.rules.Load(fd); ok {
		return r.(*validate.FieldRules)
	}
	r := readFieldRules(fd)
	e.rules.Store(fd, r)
	return r
}

func readFieldRules(fd protoreflect.FieldDescriptor) *validate.FieldRules {
	opts := fd.Options()
	if opts == nil {
		return nil
	}
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(opts)
	if err != nil {
		return nil
	}
	into := new(descriptorpb.FieldOptions)
	if err := (proto.UnmarshalOptions{Resolver: validation}).Unmarshal(raw, into); err != nil {
		return nil
	}
	rules, _ := proto.GetExtension(into, validate.E_Field).(*validate.FieldRules)
	return rules
}
