package compile

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Model is every package of a set of files, with its services and tools.
type Model struct {
	// Packages in the order their first file was given.
	Packages []*Package
	// Compartments and ToolSets are the taxonomy: every declaration made by
	// the given files and the files they import, files in path order. A
	// name may appear more than once; lint decides whether that conflicts.
	Compartments []Declared
	ToolSets     []Declared
	// Attributes are the principal attributes declared, gathered like
	// Compartments.
	Attributes []DeclaredAttribute

	instanceOnce sync.Once
	instanceEnv  *instance.Env
	instanceErr  error
}

// DeclaredAttribute is one attribute declaration and where it was made.
type DeclaredAttribute struct {
	Attribute *toolv1.Attribute
	// File is the path of the declaring file.
	File string
}

// Declared is one compartment or tool-set declaration and where it was made.
type Declared struct {
	Name        string
	Description string
	// File is the path of the declaring file.
	File string
}

// Package is one proto package of the model.
type Package struct {
	// Name is the proto package.
	Name protoreflect.FullName
	// Files of the package, in path order.
	Files []protoreflect.FileDescriptor
	// Services of the package in declaration order, with or without tools.
	Services []*Service
	// Tools of the package in declaration order (files in path order, then
	// services, then methods).
	Tools []*Tool
	// DescriptorHash is the package's wire-shape identity (see
	// DescriptorHash).
	DescriptorHash string
}

// Service is one proto service and how its methods were declared.
type Service struct {
	Desc protoreflect.ServiceDescriptor
	// Tools are the methods declared as tools, in declaration order.
	Tools []*Tool
	// Excluded are methods whose tool declaration sets exclude.
	Excluded []protoreflect.MethodDescriptor
	// Undeclared are methods that carry no tool declaration at all.
	Undeclared []protoreflect.MethodDescriptor
}

// Tool is one method declared as a tool.
type Tool struct {
	Desc    protoreflect.MethodDescriptor
	Service *Service
	// Policy is the method's (garm.tool.v1.tool) declaration.
	Policy *toolv1.ToolPolicy
	// Name is the short name: the declared one, else DefaultToolName of the
	// method.
	Name string
	// FQN is "<proto package>.<Name>".
	FQN string
	// Method is the route, "/<package>.<Service>/<Method>".
	Method string
	// Subject is the NATS subject the tool is served on.
	Subject string
	// QueueGroup is the NATS queue group the tool is served in.
	QueueGroup string
}

// Path is the tool's lint path, "<package>.<Service>.<Method>".
func (t *Tool) Path() string { return string(t.Desc.FullName()) }

// HasTools reports whether the service declares at least one tool.
func (s *Service) HasTools() bool { return len(s.Tools) > 0 }

// Build reads the tool model from files. Packages come in the order of their
// first file; a package's files are taken in path order, whatever order they
// were given in, so that every producer — protoc, buf, the catalogue builder
// with its sources listed any way — derives the same tool order and the same
// descriptor hash. Build fails only when an annotation cannot be read;
// whether the model is acceptable is Lint's decision.
func Build(files []protoreflect.FileDescriptor) (*Model, error) {
	return BuildReusing(files, nil)
}

// BuildReusing is Build, except that a package whose files are, in path
// order, the very file descriptors of a package of previous (the same
// objects, not equal ones) is not built again: previous's package is
// taken, since a package is a pure function of its files' descriptors.
// previous must be a Model Build or BuildReusing returned, and is read,
// never changed; nil reuses nothing.
func BuildReusing(files []protoreflect.FileDescriptor, previous *Model) (*Model, error) {
	var built map[protoreflect.FullName]*Package
	if previous != nil {
		built = make(map[protoreflect.FullName]*Package, len(previous.Packages))
		for _, pkg := range previous.Packages {
			built[pkg.Name] = pkg
		}
	}
	m := &Model{}
	byName := map[protoreflect.FullName]*Package{}
	for _, f := range files {
		pkg := byName[f.Package()]
		if pkg == nil {
			pkg = &Package{Name: f.Package()}
			byName[f.Package()] = pkg
			m.Packages = append(m.Packages, pkg)
		}
		pkg.Files = append(pkg.Files, f)
	}
	// Packages are independent of each other, and a catalogue of thousands
	// of tools is read at every garmd start and reload, so they are built
	// beside each other; the first failing package, in order, is reported.
	errs := make([]error, len(m.Packages))
	concurrently(len(m.Packages), func(i int) {
		pkg := m.Packages[i]
		sortFiles(pkg.Files)
		if prev := built[pkg.Name]; prev != nil && slices.Equal(prev.Files, pkg.Files) {
			m.Packages[i] = prev
			return
		}
		errs[i] = buildPackage(pkg)
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if err := m.readTaxonomy(files); err != nil {
		return nil, err
	}
	return m, nil
}

// sortFiles puts a package's files in path order.
func sortFiles(files []protoreflect.FileDescriptor) {
	slices.SortStableFunc(files, func(a, b protoreflect.FileDescriptor) int { return strings.Compare(a.Path(), b.Path()) })
}

func buildPackage(pkg *Package) error {
	sortFiles(pkg.Files)
	for _, f := range pkg.Files {
		services := f.Services()
		for i := 0; i < services.Len(); i++ {
			svc, err := buildService(pkg, services.Get(i))
			if err != nil {
				return err
			}
			pkg.Services = append(pkg.Services, svc)
			pkg.Tools = append(pkg.Tools, svc.Tools...)
		}
	}
	pkg.DescriptorHash = DescriptorHash(pkg.Tools)
	return nil
}

// concurrently calls f(0) … f(n-1) on up to GOMAXPROCS goroutines and
// returns when every call has.
func concurrently(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		})
	}
	wg.Wait()
}

// readTaxonomy collects the file-level declarations of files and of every
// file they import, so a taxonomy kept in a shared, imported file counts.
func (m *Model) readTaxonomy(files []protoreflect.FileDescriptor) error {
	all := map[string]protoreflect.FileDescriptor{}
	var visit func(f protoreflect.FileDescriptor)
	visit = func(f protoreflect.FileDescriptor) {
		if _, seen := all[f.Path()]; seen {
			return
		}
		all[f.Path()] = f
		imports := f.Imports()
		for i := 0; i < imports.Len(); i++ {
			visit(imports.Get(i).FileDescriptor)
		}
	}
	for _, f := range files {
		visit(f)
	}
	for _, path := range slices.Sorted(maps.Keys(all)) {
		compartments, sets, err := DeclarationsOf(all[path])
		if err != nil {
			return err
		}
		for _, d := range compartments.GetDeclared() {
			m.Compartments = append(m.Compartments, Declared{d.GetName(), d.GetDescription(), path})
		}
		for _, d := range sets.GetDeclared() {
			m.ToolSets = append(m.ToolSets, Declared{d.GetName(), d.GetDescription(), path})
		}
		attrs, err := AttributesOf(all[path])
		if err != nil {
			return err
		}
		for _, a := range attrs.GetDeclared() {
			m.Attributes = append(m.Attributes, DeclaredAttribute{a, path})
		}
	}
	return nil
}

func buildService(pkg *Package, sd protoreflect.ServiceDescriptor) (*Service, error) {
	svc := &Service{Desc: sd}
	methods := sd.Methods()
	for i := 0; i < methods.Len(); i++ {
		md := methods.Get(i)
		policy, declared, err := ToolPolicyOf(md)
		if err != nil {
			return nil, err
		}
		switch {
		case !declared:
			svc.Undeclared = append(svc.Undeclared, md)
		case policy.GetExclude():
			svc.Excluded = append(svc.Excluded, md)
		default:
			svc.Tools = append(svc.Tools, newTool(pkg, svc, md, policy))
		}
	}
	return svc, nil
}

func newTool(pkg *Package, svc *Service, md protoreflect.MethodDescriptor, policy *toolv1.ToolPolicy) *Tool {
	name := policy.GetName()
	if name == "" {
		name = DefaultToolName(string(md.Name()))
	}
	method := fmt.Sprintf("/%s/%s", svc.Desc.FullName(), md.Name())
	return &Tool{
		Desc:       md,
		Service:    svc,
		Policy:     policy,
		Name:       name,
		FQN:        string(pkg.Name) + "." + name,
		Method:     method,
		Subject:    wire.Subject(method),
		QueueGroup: wire.QueueGroup(string(svc.Desc.FullName())),
	}
}
