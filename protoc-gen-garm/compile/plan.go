package compile

import (
	"fmt"
	"slices"
	"strings"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// PlanPackage precomputes the plan of every tool input and output message of
// a package, sorted by message full name so that a plan file changes only
// where a policy does. A message that is both an input and an output appears
// once. It fails where lint refuses (a field without a policy, a recursive
// message): plans are built only from a model that passed Lint.
func PlanPackage(pkg *Package) (*planv1.PackagePlan, error) {
	seen := map[protoreflect.FullName]bool{}
	var roots []protoreflect.MessageDescriptor
	for _, t := range pkg.Tools {
		for _, md := range []protoreflect.MessageDescriptor{t.Desc.Input(), t.Desc.Output()} {
			if !seen[md.FullName()] {
				seen[md.FullName()] = true
				roots = append(roots, md)
			}
		}
	}
	slices.SortFunc(roots, func(a, b protoreflect.MessageDescriptor) int {
		return strings.Compare(string(a.FullName()), string(b.FullName()))
	})
	plan := &planv1.PackagePlan{Package: string(pkg.Name)}
	for _, md := range roots {
		mp, err := PlanMessage(md)
		if err != nil {
			return nil, err
		}
		plan.Messages = append(plan.Messages, mp)
	}
	return plan, nil
}

// PlanMessage precomputes one root message's plan: its schema shell and one
// rule per field reachable from it, depth-first, parents before children,
// fields in number order. Each rule carries its policy resolved (write
// defaults to read, on_deny to omit, compartments sorted and unique), its
// container and its own schema fragment.
func PlanMessage(md protoreflect.MessageDescriptor) (*planv1.MessagePlan, error) {
	shell, err := MessageSchema(md)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", md.FullName(), err)
	}
	mp := &planv1.MessagePlan{Message: string(md.FullName()), Schema: shell}
	if IsOpaque(md) {
		return mp, nil
	}
	w := planWalk{plan: mp, onPath: map[protoreflect.FullName]bool{}}
	if err := w.message(md, "", nil); err != nil {
		return nil, err
	}
	return mp, nil
}

type planWalk struct {
	plan *planv1.MessagePlan
	// onPath holds the messages between the root and the current field,
	// which is how recursion is found.
	onPath map[protoreflect.FullName]bool
}

func (w *planWalk) message(md protoreflect.MessageDescriptor, prefix string, numbers []int32) error {
	if w.onPath[md.FullName()] {
		return fmt.Errorf("%s: %s is recursive; a plan is flat, so a message reachable from a tool cannot contain itself", w.plan.GetMessage(), md.FullName())
	}
	w.onPath[md.FullName()] = true
	defer delete(w.onPath, md.FullName())
	for _, fd := range fieldsByNumber(md) {
		path := prefix + string(fd.Name())
		nums := append(slices.Clip(numbers), int32(fd.Number()))
		rule, err := planRule(fd, path, nums)
		if err != nil {
			return err
		}
		w.plan.Rules = append(w.plan.Rules, rule)
		if child := ChildMessage(fd); child != nil {
			if err := w.message(child, path+".", nums); err != nil {
				return err
			}
		}
	}
	return nil
}

func planRule(fd protoreflect.FieldDescriptor, path string, numbers []int32) (*planv1.FieldRule, error) {
	policy, origin, err := FieldPolicyOf(fd)
	if err != nil {
		return nil, err
	}
	if origin == NoPolicy || policy.GetRead() == toolv1.Clearance_CLEARANCE_UNSPECIFIED {
		return nil, fmt.Errorf("%s: no policy with a read clearance", fd.FullName())
	}
	fragment, err := FieldSchema(fd)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fd.FullName(), err)
	}
	write := policy.GetWrite()
	if write == toolv1.Clearance_CLEARANCE_UNSPECIFIED {
		write = policy.GetRead()
	}
	onDeny := policy.GetOnDeny()
	if onDeny.GetKind() == nil {
		onDeny = &toolv1.Redaction{Kind: &toolv1.Redaction_Omit_{Omit: &toolv1.Redaction_Omit{}}}
	}
	compartments := slices.Compact(slices.Sorted(slices.Values(policy.GetCompartments())))
	runner := policy.GetSource() == toolv1.Source_SOURCE_RUNNER
	return &planv1.FieldRule{
		Path:          path,
		Numbers:       numbers,
		Read:          policy.GetRead(),
		Write:         write,
		Compartments:  compartments,
		OnDeny:        onDeny,
		AuditOnRead:   policy.GetAuditOnRead(),
		RunnerSourced: runner,
		Container:     ContainerOf(fd),
		Schema:        fragment,
		Required:      !runner && FieldRequired(fd),
	}, nil
}
