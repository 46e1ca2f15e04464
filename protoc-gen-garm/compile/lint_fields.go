package compile

import (
	"fmt"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// fields walks every field reachable from each tool's input and output and
// checks its policy: L1, L5, L6, L7, L9, L10, L26, L34. A rule about the
// field itself is reported once, at the first path that reaches it; a rule
// about where the field is reached (L26, L34) at every such path.
func (l *linter) fields() {
	reported := map[string]bool{}
	for _, pkg := range l.model.Packages {
		for _, t := range pkg.Tools {
			for _, side := range []struct {
				name string
				md   protoreflect.MessageDescriptor
			}{{"input", t.Desc.Input()}, {"output", t.Desc.Output()}} {
				w := fieldWalk{linter: l, reported: reported, request: side.name == "input", onPath: map[protoreflect.FullName]bool{}}
				w.message(side.md, fmt.Sprintf("%s(%s)", t.Path(), side.name), true)
			}
		}
	}
}

type fieldWalk struct {
	*linter
	// reported holds "<rule> <field full name> <message>" for findings
	// already reported, so one bad field reached from many tools is reported
	// once.
	reported map[string]bool
	request  bool
	onPath   map[protoreflect.FullName]bool
}

func (w *fieldWalk) message(md protoreflect.MessageDescriptor, path string, top bool) {
	if IsOpaque(md) {
		return
	}
	w.onPath[md.FullName()] = true
	defer delete(w.onPath, md.FullName())
	for _, fd := range fieldsByNumber(md) {
		fieldPath := path + "." + string(fd.Name())
		w.field(fd, fieldPath, top)
		child := ChildMessage(fd)
		if child == nil {
			continue
		}
		if w.onPath[child.FullName()] {
			w.report(Error, "L26", fieldPath, "message %s is recursive (it contains itself here); a plan is flat, so a message reachable from a tool cannot", child.FullName())
			continue
		}
		w.message(child, fieldPath, false)
	}
}

// once reports a finding about a field the first time it is made.
func (w *fieldWalk) once(fd protoreflect.FieldDescriptor, sev Severity, rule, path, format string, args ...any) {
	message := fmt.Sprintf(format, args...)
	key := rule + " " + string(fd.FullName()) + " " + message
	if w.reported[key] {
		return
	}
	w.reported[key] = true
	w.report(sev, rule, path, "%s", message)
}

func (w *fieldWalk) field(fd protoreflect.FieldDescriptor, path string, top bool) {
	policy, origin, err := w.policyOf(fd)
	if err != nil {
		w.once(fd, Error, "L1", path, "its policy cannot be read: %v", err)
		return
	}
	if policy.GetSource() == toolv1.Source_SOURCE_RUNNER && !(w.request && top && fd.Name() == "idempotency_key" && isSingularString(fd)) {
		w.report(Error, "L34", path, "SOURCE_RUNNER is allowed only on a top-level string field named idempotency_key of a request")
	}
	if origin == NoPolicy {
		w.once(fd, Error, "L1", path, "the field has no policy: declare (garm.tool.v1.field_policy) on it or (garm.tool.v1.default_field_policy) on %s", fd.ContainingMessage().FullName())
		return
	}
	if policy.GetRead() == toolv1.Clearance_CLEARANCE_UNSPECIFIED {
		w.once(fd, Error, "L1", path, "its %s has no read clearance", origin)
	}
	if policy.GetWrite() != toolv1.Clearance_CLEARANCE_UNSPECIFIED && policy.GetRead() != toolv1.Clearance_CLEARANCE_UNSPECIFIED &&
		policy.GetWrite() < policy.GetRead() {
		w.once(fd, Warning, "L10", path, "write %s is below read %s: a caller may set what it cannot see", policy.GetWrite(), policy.GetRead())
	}
	for _, c := range policy.GetCompartments() {
		if !w.compartmentDeclared(c) {
			w.once(fd, w.scope.severity(), "L7", path, "compartment %q is not declared in any file%s%s", c, w.compartmentHint(c), w.scope.suffix())
		}
	}
	w.redaction(fd, policy, origin, path)
}

// redaction checks that a field's on_deny can be applied to it: L5, L6, L9.
func (w *fieldWalk) redaction(fd protoreflect.FieldDescriptor, policy *toolv1.FieldPolicy, origin PolicyOrigin, path string) {
	value := fd
	if fd.IsMap() {
		value = fd.MapValue()
	}
	switch kind := policy.GetOnDeny().GetKind().(type) {
	case nil, *toolv1.Redaction_Omit_:
		if !fd.IsList() && !fd.IsMap() && fd.Message() == nil && !fd.HasPresence() {
			w.once(fd, Error, "L6", path, "on_deny omit (from its %s) on a singular %s without presence: an omitted zero reads as a real zero; declare the field optional or choose another on_deny", origin, fd.Kind())
		}
	case *toolv1.Redaction_DateGrain_:
		if value.Message() == nil || value.Message().FullName() != "google.protobuf.Timestamp" {
			w.once(fd, Error, "L5", path, "on_deny date_grain needs a google.protobuf.Timestamp, not %s", valueKind(fd))
		}
	default:
		if value.Kind() != protoreflect.StringKind {
			w.once(fd, Error, "L5", path, "on_deny %s needs a string, not %s", redactionName(policy.GetOnDeny()), valueKind(fd))
		}
		if k, ok := kind.(*toolv1.Redaction_KeepLast_); ok && k.KeepLast.GetReason() == "" {
			w.once(fd, Error, "L9", path, "on_deny keep_last needs a reason")
		}
		if k, ok := kind.(*toolv1.Redaction_Truncate_); ok && k.Truncate.GetReason() == "" {
			w.once(fd, Error, "L9", path, "on_deny truncate needs a reason")
		}
	}
}

// redactionName is the name of a redaction's arm, as declared.
func redactionName(r *toolv1.Redaction) string {
	arm := r.ProtoReflect().WhichOneof(r.ProtoReflect().Descriptor().Oneofs().ByName("kind"))
	if arm == nil {
		return "omit"
	}
	return string(arm.Name())
}

// valueKind describes what a redaction would apply to: the field's kind, a
// list's element kind or a map's value kind.
func valueKind(fd protoreflect.FieldDescriptor) string {
	switch {
	case fd.IsMap():
		return "a map of " + kindName(fd.MapValue())
	case fd.IsList():
		return "a list of " + kindName(fd)
	default:
		return kindName(fd)
	}
}

func isSingularString(fd protoreflect.FieldDescriptor) bool {
	return fd.Kind() == protoreflect.StringKind && !fd.IsList() && !fd.IsMap()
}
