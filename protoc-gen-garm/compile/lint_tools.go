package compile

import (
	"slices"
	"strings"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// tools checks each tool's own declaration: L2, L4, L7 and L20 for what it
// names, L11, L12, L14, L16, L19, L21, L23, L31–L33, L35, L36, the instance rules' L37–L43 and L45–L49, the limits' L50–L55; and L27 for the
// methods of its service that say nothing.
func (l *linter) tools() {
	for _, pkg := range l.model.Packages {
		for _, svc := range pkg.Services {
			if !svc.HasTools() {
				continue
			}
			for _, md := range svc.Undeclared {
				l.report(Error, "L27", string(md.FullName()),
					"a method of a service with tools must declare (garm.tool.v1.tool): set exclude: true to keep it off the tool surface")
			}
		}
		for _, t := range pkg.Tools {
			l.tool(t)
		}
	}
}

func (l *linter) tool(t *Tool) {
	p, path := t.Policy, t.Path()
	if strings.TrimSpace(p.GetDescription()) == "" {
		l.report(Error, "L2", path, "a tool needs a description")
	}
	if t.Desc.IsStreamingClient() || t.Desc.IsStreamingServer() {
		l.report(Error, "L4", path, "a streaming method cannot be a tool")
	}
	for _, c := range p.GetCompartments() {
		l.compartmentUsed(path, "compartment", c)
	}
	for _, c := range p.GetApproval().GetApproverCompartments() {
		l.compartmentUsed(path, "approver compartment", c)
	}
	for _, set := range p.GetSets() {
		if !l.toolSetDeclared(set) {
			l.report(l.scope.severity(), "L20", path, "tool set %q is not declared in any file%s", set, l.scope.suffix())
		}
	}
	l.outputVisibility(t)
	l.effects(t)
	l.examples(t)
	l.approval(t)
	l.instanceRules(t)
	l.limits(t)
}

// outputVisibility is L11: a caller at exactly the tool's own minimum should
// see something of its answer.
func (l *linter) outputVisibility(t *Tool) {
	out := t.Desc.Output()
	if IsOpaque(out) || out.Fields().Len() == 0 {
		return
	}
	fields := out.Fields()
	for i := 0; i < fields.Len(); i++ {
		policy, _, err := l.policyOf(fields.Get(i))
		if err != nil || policy == nil {
			return // L1 or the model's read already reports it
		}
		if allows(t.Policy.GetMinClearance(), policy.GetRead()) && covers(t.Policy.GetCompartments(), policy.GetCompartments()) {
			return
		}
	}
	minimum := t.Policy.GetMinClearance().String()
	if cs := t.Policy.GetCompartments(); len(cs) > 0 {
		minimum += " with " + strings.Join(cs, ", ")
	}
	l.report(Warning, "L11", t.Path(), "no output field is visible to a caller at the tool's own minimum (%s): such a caller gets an empty answer", minimum)
}

// effects checks what the tool says about the consequences of a call: L12,
// L14, L16, L21, L23.
func (l *linter) effects(t *Tool) {
	p, path := t.Policy, t.Path()
	effects, mode, audit := p.GetEffects(), p.GetApproval().GetMode(), p.GetAudit()
	if effects.GetReversibility() == toolv1.Reversibility_REVERSIBILITY_COMPENSABLE {
		switch name := effects.GetCompensatingTool(); {
		case name == "":
			l.report(Error, "L12", path, "a compensable tool must name its compensating_tool")
		case l.findTool(name) == nil:
			l.report(l.scope.severity(), "L12", path, "compensating_tool %q names no tool%s", name, l.scope.suffix())
		}
	}
	if p.GetVerb() == toolv1.Verb_VERB_DESTRUCTIVE && mode != toolv1.ToolPolicy_Approval_MODE_GRANT {
		l.report(Error, "L14", path, "a VERB_DESTRUCTIVE tool needs approval mode MODE_GRANT")
	}
	irreversible := effects.GetReversibility() == toolv1.Reversibility_REVERSIBILITY_NONE ||
		effects.GetReversibility() == toolv1.Reversibility_REVERSIBILITY_UNSPECIFIED
	if irreversible && effects.GetExternal() && mode != toolv1.ToolPolicy_Approval_MODE_NOTIFY && mode != toolv1.ToolPolicy_Approval_MODE_GRANT {
		l.report(Error, "L16", path, "an irreversible tool with external effects needs approval mode MODE_NOTIFY or MODE_GRANT")
	}
	if p.GetVerb() == toolv1.Verb_VERB_DESTRUCTIVE && (audit.GetLevel() != toolv1.ToolPolicy_Audit_LEVEL_AUDIT || !audit.GetFailClosed()) {
		l.report(Error, "L21", path, "a VERB_DESTRUCTIVE tool needs audit level LEVEL_AUDIT with fail_closed")
	}
	if audit.GetLevel() == toolv1.ToolPolicy_Audit_LEVEL_AUDIT && audit.GetRetainDays() == 0 {
		l.report(Error, "L23", path, "audit level LEVEL_AUDIT needs retain_days > 0")
	}
}

// findTool finds a tool of the linted set by short name or FQN.
func (l *linter) findTool(name string) *Tool {
	if l.toolsByName == nil {
		l.toolsByName = map[string]*Tool{}
		for _, pkg := range l.model.Packages {
			for _, t := range pkg.Tools {
				l.toolsByName[t.FQN] = t
				if _, taken := l.toolsByName[t.Name]; !taken {
					l.toolsByName[t.Name] = t
				}
			}
		}
	}
	return l.toolsByName[name]
}

// examples is L19: a guidance example must be a request garmd would accept.
func (l *linter) examples(t *Tool) {
	for i, ex := range t.Policy.GetGuidance().GetExamples() {
		req := dynamicpb.NewMessage(t.Desc.Input())
		if err := protojson.Unmarshal([]byte(ex.GetRequestJson()), req); err != nil {
			l.report(Error, "L19", t.Path(), "guidance example %d: request_json does not parse into %s: %s",
				i+1, t.Desc.Input().FullName(), stableError(err))
		}
	}
}

// stableError is an error's text with protobuf's deliberately unstable
// spacing normalised, so a diagnostic is the same from build to build.
func stableError(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\u00a0", " ")), " ")
}

// approval checks the approval declaration: L31, L32, L33, L35, L36.
func (l *linter) approval(t *Tool) {
	a, path := t.Policy.GetApproval(), t.Path()
	grant := a.GetMode() == toolv1.ToolPolicy_Approval_MODE_GRANT
	if grant && a.GetMaxGrantAgeSeconds() == 0 {
		l.report(Error, "L35", path, "approval mode MODE_GRANT needs max_grant_age_seconds > 0")
	}
	if len(a.GetMaterialFields()) > 0 && !grant {
		l.report(Error, "L31", path, "material_fields need approval mode MODE_GRANT")
	}
	if a.GetDistinctApprover() && !grant {
		l.report(Error, "L36", path, "distinct_approver needs approval mode MODE_GRANT: without a grant there is no approver to tell apart")
	}
	for _, material := range a.GetMaterialFields() {
		fields, problem := materialPath(t.Desc.Input(), material)
		if problem != "" {
			l.report(Error, "L32", path, "material field %q %s", material, problem)
			continue
		}
		for _, fd := range fields {
			if !FieldRequired(fd) {
				l.report(Warning, "L33", path, "material field %q can be absent (%s has presence): a grant then binds its absence", material, fd.Name())
				break
			}
		}
	}
}

// materialPath resolves a dotted path of proto field names from the request
// to a string, integer, bool or enum leaf through singular message fields,
// or says what is wrong with it.
func materialPath(req protoreflect.MessageDescriptor, path string) ([]protoreflect.FieldDescriptor, string) {
	if path == "" {
		return nil, "is empty"
	}
	var fields []protoreflect.FieldDescriptor
	md := req
	segments := strings.Split(path, ".")
	for i, seg := range segments {
		if md == nil || IsOpaque(md) {
			return nil, "goes inside a value that has no fields of its own"
		}
		fd := md.Fields().ByName(protoreflect.Name(seg))
		if fd == nil {
			return nil, "names no field of " + string(req.FullName())
		}
		fields = append(fields, fd)
		if fd.IsList() || fd.IsMap() {
			return nil, "goes through a list or map; a material field is one value"
		}
		last := i == len(segments)-1
		if !last {
			md = fd.Message()
			continue
		}
		switch fd.Kind() {
		case protoreflect.StringKind, protoreflect.BoolKind, protoreflect.EnumKind,
			protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
			protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
			protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
			return fields, ""
		default:
			return nil, "ends at a " + kindName(fd) + "; a material field is a string, integer, bool or enum"
		}
	}
	return fields, ""
}

// kindName names a field's value kind for a diagnostic: the scalar kind, or
// "message <full name>".
func kindName(fd protoreflect.FieldDescriptor) string {
	if fd.Message() != nil {
		return "message " + string(fd.Message().FullName())
	}
	return fd.Kind().String()
}

// allows is the clearance lattice of design 3.2: false when either side is
// unspecified, else have >= need.
func allows(have, need toolv1.Clearance) bool {
	if have == toolv1.Clearance_CLEARANCE_UNSPECIFIED || need == toolv1.Clearance_CLEARANCE_UNSPECIFIED {
		return false
	}
	return have >= need
}

// covers reports whether held names every required compartment.
func covers(held, required []string) bool {
	for _, r := range required {
		if !slices.Contains(held, r) {
			return false
		}
	}
	return true
}
