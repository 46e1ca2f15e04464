package plugin

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"
)

const (
	contextPackage  = protogen.GoImportPath("context")
	errorsPackage   = protogen.GoImportPath("errors")
	fmtPackage      = protogen.GoImportPath("fmt")
	protoPackage    = protogen.GoImportPath("google.golang.org/protobuf/proto")
	toolbindPackage = protogen.GoImportPath("github.com/garm-dev/garm/runtime/toolbind")
)

// goPackage is the set of generated files that share one Go package, and the
// tool-bearing services among them.
type goPackage struct {
	importPath protogen.GoImportPath
	name       protogen.GoPackageName
	files      []*protogen.File
	services   []*service
	model      *compile.Package
}

// service pairs a tool-bearing proto service with its protogen view.
type service struct {
	gen     *protogen.Service
	model   *compile.Service
	methods map[protoreflect.FullName]*protogen.Method
}

func newService(gen *protogen.Service, model *compile.Service) *service {
	methods := make(map[protoreflect.FullName]*protogen.Method, len(gen.Methods))
	for _, m := range gen.Methods {
		methods[m.Desc.FullName()] = m
	}
	return &service{gen: gen, model: model, methods: methods}
}

// generateBindings writes one <gopkgname>_garm.pb.go per Go package that
// holds at least one tool.
func generateBindings(gen *protogen.Plugin, files []*protogen.File, model *compile.Model, params Params) error {
	pkgs, err := groupByGoPackage(files, model)
	if err != nil {
		return err
	}
	for _, pkg := range pkgs {
		if len(pkg.services) == 0 {
			continue
		}
		if err := checkIdentifiers(pkg); err != nil {
			return err
		}
		dir := path.Dir(pkg.files[0].GeneratedFilenamePrefix)
		g := gen.NewGeneratedFile(path.Join(dir, string(pkg.name)+"_garm.pb.go"), pkg.importPath)
		generateFile(g, pkg, params)
	}
	return nil
}

// groupByGoPackage groups files by Go import path, in the order given, and
// pairs each tool-bearing service with the model. A Go package holding tools
// of two proto packages is refused: its per-package constants would collide.
func groupByGoPackage(files []*protogen.File, model *compile.Model) ([]*goPackage, error) {
	services := map[protoreflect.FullName]*compile.Service{}
	packages := map[protoreflect.FullName]*compile.Package{}
	for _, p := range model.Packages {
		packages[p.Name] = p
		for _, s := range p.Services {
			services[s.Desc.FullName()] = s
		}
	}
	var pkgs []*goPackage
	byPath := map[protogen.GoImportPath]*goPackage{}
	for _, f := range files {
		pkg := byPath[f.GoImportPath]
		if pkg == nil {
			pkg = &goPackage{importPath: f.GoImportPath, name: f.GoPackageName}
			byPath[f.GoImportPath] = pkg
			pkgs = append(pkgs, pkg)
		}
		pkg.files = append(pkg.files, f)
		for _, s := range f.Services {
			ms := services[s.Desc.FullName()]
			if ms == nil || !ms.HasTools() {
				continue
			}
			mp := packages[f.Desc.Package()]
			if pkg.model != nil && pkg.model != mp {
				return nil, fmt.Errorf("Go package %s holds tools of two proto packages, %s and %s; give each proto package its own go_package",
					pkg.importPath, pkg.model.Name, mp.Name)
			}
			pkg.model = mp
			pkg.services = append(pkg.services, newService(s, ms))
		}
	}
	return pkgs, nil
}

// generatedNames are the package-level identifiers a Go package's bindings
// declare.
func generatedNames(pkg *goPackage) []string {
	names := []string{"ContractVersion", "DescriptorHash"}
	for _, s := range pkg.services {
		names = append(names, handlerName(s), serveName(s), toolsName(s), toolsFuncName(s), toolByNameName(s))
	}
	return names
}

// checkIdentifiers refuses bindings whose names would collide with each
// other or with what protoc-gen-go declares in the same Go package, so the
// failure is a clear message here rather than a compile error later.
func checkIdentifiers(pkg *goPackage) error {
	taken := map[string]string{}
	var walkMessages func([]*protogen.Message)
	walkEnums := func(enums []*protogen.Enum) {
		for _, e := range enums {
			taken[e.GoIdent.GoName] = "enum " + string(e.Desc.FullName())
			for _, v := range e.Values {
				taken[v.GoIdent.GoName] = "enum value " + string(v.Desc.FullName())
			}
		}
	}
	walkExtensions := func(xs []*protogen.Extension) {
		for _, x := range xs {
			taken[x.GoIdent.GoName] = "extension " + string(x.Desc.FullName())
		}
	}
	walkMessages = func(msgs []*protogen.Message) {
		for _, m := range msgs {
			taken[m.GoIdent.GoName] = "message " + string(m.Desc.FullName())
			for _, o := range m.Oneofs {
				for _, f := range o.Fields {
					taken[f.GoIdent.GoName] = "oneof field " + string(f.Desc.FullName())
				}
			}
			walkEnums(m.Enums)
			walkExtensions(m.Extensions)
			walkMessages(m.Messages)
		}
	}
	for _, f := range pkg.files {
		taken[f.GoDescriptorIdent.GoName] = "file " + f.Desc.Path()
		walkEnums(f.Enums)
		walkExtensions(f.Extensions)
		walkMessages(f.Messages)
	}
	for _, name := range generatedNames(pkg) {
		if what, clash := taken[name]; clash {
			return fmt.Errorf("Go package %s: the binding %s would collide with %s; rename one of them",
				pkg.importPath, name, what)
		}
		taken[name] = "another binding"
	}
	return nil
}

func handlerName(s *service) string    { return s.gen.GoName + "Handler" }
func serveName(s *service) string      { return "Serve" + s.gen.GoName }
func toolsName(s *service) string      { return s.gen.GoName + "Tools" }
func toolsFuncName(s *service) string  { return lowerFirst(s.gen.GoName) + "Tools" }
func toolByNameName(s *service) string { return s.gen.GoName + "Tool" }

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// generateFile writes the bindings of one Go package.
func generateFile(g *protogen.GeneratedFile, pkg *goPackage, params Params) {
	g.P("// Code generated by protoc-gen-garm. DO NOT EDIT.")
	sources := make([]string, 0, len(pkg.files))
	for _, f := range pkg.files {
		sources = append(sources, f.Desc.Path())
	}
	slices.Sort(sources)
	for _, src := range sources {
		g.P("// source: ", src)
	}
	g.P()
	g.P("package ", pkg.name)
	g.P()
	generateHandshake(g)
	generateConstants(g, pkg, params)
	for _, s := range pkg.services {
		generateHandler(g, s)
		generateToolRefs(g, s)
		generateToolByName(g, s)
		generateServe(g, s)
	}
}

// generateHandshake references the toolbind version this generator targets,
// so a mismatched runtime fails to compile with a message saying what to do.
func generateHandshake(g *protogen.GeneratedFile) {
	g.P("// This file needs a garm runtime that builds generated code version 1. If the next")
	g.P("// line fails to compile, the compiler's message and the comment on")
	g.P("// ", toolbindPackage.Ident("SupportPackageIsVersion1"), " say whether to upgrade garm or to regenerate.")
	g.P("const _ ", toolbindPackage.Ident("GeneratedCodeVersion"), " = ", toolbindPackage.Ident("SupportPackageIsVersion1"))
	g.P()
}

func generateConstants(g *protogen.GeneratedFile, pkg *goPackage, params Params) {
	g.P("// ContractVersion is the contract version these bindings were generated for.")
	g.P("const ContractVersion = ", quote(params.ContractVersion))
	g.P()
	g.P("// DescriptorHash is the wire-shape identity of proto package ", pkg.model.Name, ": SHA-256 over")
	g.P("// the shape of every message its tools send or receive. A tool service advertises it,")
	g.P("// and garmd compares it with the catalogue's before routing calls to the service.")
	g.P("const DescriptorHash = ", quote(pkg.model.DescriptorHash))
	g.P()
}

func generateHandler(g *protogen.GeneratedFile, s *service) {
	g.P("// ", handlerName(s), " is implemented by a service that serves the tools of ", s.gen.Desc.FullName(), ".")
	g.P("// A tool returns its full answer; garmd decides what each caller sees of it.")
	g.P("type ", handlerName(s), " interface {")
	for _, t := range s.model.Tools {
		m := methodOf(s, t)
		g.P("// ", m.GoName, " serves the tool ", t.FQN, ".")
		if comment := strings.TrimRight(string(m.Comments.Leading), " \t\n"); strings.TrimSpace(comment) != "" {
			g.P("//")
			for _, line := range strings.Split(comment, "\n") {
				g.P(docLine(line))
			}
		}
		g.P(m.GoName, "(", contextPackage.Ident("Context"), ", *", m.Input.GoIdent, ") (*", m.Output.GoIdent, ", error)")
	}
	g.P("}")
	g.P()
}

// docLine is one line of a proto comment as a Go comment line, spelled as
// gofmt leaves it in any Go release: "// text", with the line's own
// indentation beyond its first space kept, and no trailing space.
func docLine(line string) string {
	line = strings.TrimRight(line, " \t")
	switch {
	case strings.TrimSpace(line) == "":
		return "//"
	case strings.HasPrefix(line, " "):
		return "//" + line
	}
	return "// " + line
}

func generateToolRefs(g *protogen.GeneratedFile, s *service) {
	g.P("// ", toolsName(s), " are the tools of ", s.gen.Desc.FullName(), ", in declaration order.")
	g.P("var ", toolsName(s), " = ", toolsFuncName(s), "()")
	g.P()
	g.P("func ", toolsFuncName(s), "() []", toolbindPackage.Ident("ToolRef"), " {")
	g.P("return []", toolbindPackage.Ident("ToolRef"), "{")
	for _, t := range s.model.Tools {
		g.P("{")
		g.P("FQN: ", quote(t.FQN), ",")
		g.P("Subject: ", quote(t.Subject), ",")
		g.P("Method: ", quote(t.Method), ",")
		g.P("Service: ", quote(t.QueueGroup), ",")
		g.P("ContractVersion: ContractVersion,")
		g.P("DescriptorHash: DescriptorHash,")
		g.P("},")
	}
	g.P("}")
	g.P("}")
	g.P()
}

// generateToolByName writes <Service>Tool, which names a tool by its short
// name or FQN, so that a test or a client does not pick tools by their
// position in <Service>Tools, which adding a tool shifts.
func generateToolByName(g *protogen.GeneratedFile, s *service) {
	names := make([]string, len(s.model.Tools))
	for i, t := range s.model.Tools {
		names[i] = t.Name
	}
	example := s.model.Tools[0]
	g.P("// ", toolByNameName(s), " is the tool of ", s.gen.Desc.FullName(), " named name, by its short name")
	g.P("// (", quote(example.Name), ") or its FQN (", quote(example.FQN), "). It panics, naming the tools")
	g.P("// there are, when there is none of that name: the name is the caller's constant, as")
	g.P("// regexp.MustCompile's pattern is.")
	g.P("func ", toolByNameName(s), "(name string) ", toolbindPackage.Ident("ToolRef"), " {")
	g.P("tools := ", toolsFuncName(s), "()")
	g.P("switch name {")
	for i, t := range s.model.Tools {
		g.P("case ", quote(t.Name), ", ", quote(t.FQN), ":")
		g.P("return tools[", i, "]")
	}
	g.P("}")
	g.P("panic(", fmtPackage.Ident("Sprintf"), "(", quote(toolByNameName(s)+"(%q): "+string(s.gen.Desc.FullName())+" has no tool of that name; its tools are "+strings.Join(names, ", ")), ", name))")
	g.P("}")
	g.P()
}

func generateServe(g *protogen.GeneratedFile, s *service) {
	msg := protoPackage.Ident("Message")
	g.P("// ", serveName(s), " registers every tool of ", s.gen.Desc.FullName(), " on r, served by h.")
	g.P("func ", serveName(s), "(r ", toolbindPackage.Ident("Registrar"), ", h ", handlerName(s), ") error {")
	g.P("if r == nil || h == nil {")
	g.P("return ", errorsPackage.Ident("New"), "(", quote(serveName(s)+": a registrar and a handler are required"), ")")
	g.P("}")
	g.P("tools := ", toolsFuncName(s), "()")
	for i, t := range s.model.Tools {
		m := methodOf(s, t)
		g.P("if err := r.Endpoint(tools[", i, "],")
		g.P("func() ", msg, " { return new(", m.Input.GoIdent, ") },")
		g.P("func(ctx ", contextPackage.Ident("Context"), ", req ", msg, ") (", msg, ", error) {")
		g.P("in, ok := req.(*", m.Input.GoIdent, ")")
		g.P("if !ok {")
		g.P("return nil, ", fmtPackage.Ident("Errorf"), "(", quote(t.Subject+": request is %T, want *"+string(m.Input.Desc.FullName())), ", req)")
		g.P("}")
		g.P("out, err := h.", m.GoName, "(ctx, in)")
		g.P("if err != nil {")
		g.P("return nil, err")
		g.P("}")
		g.P("if out == nil {")
		g.P("return nil, ", errorsPackage.Ident("New"), "(", quote(t.Subject+": handler returned no response and no error"), ")")
		g.P("}")
		g.P("return out, nil")
		g.P("}); err != nil {")
		g.P("return err")
		g.P("}")
	}
	g.P("return nil")
	g.P("}")
	g.P()
}

// methodOf finds the protogen view of a tool's method; both views come from
// the same descriptors, so it is always there.
func methodOf(s *service, t *compile.Tool) *protogen.Method { return s.methods[t.Desc.FullName()] }

func quote(s string) string { return fmt.Sprintf("%q", s) }
