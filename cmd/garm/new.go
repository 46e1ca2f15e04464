package main

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"unicode"

	"github.com/bufbuild/protocompile"
	"github.com/garm-dev/garm/annotations"
	"github.com/garm-dev/garm/protoc-gen-garm/generate"
	"github.com/garm-dev/garm/third_party/protovalidate"
	gomodule "golang.org/x/mod/module"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// scaffoldFiles are the templates of `garm new toolservice`, each at the
// path it is written to, with .tmpl appended; NAME in a path is the
// service's name.
//
//go:embed scaffold
var scaffoldFiles embed.FS

// serviceName is what a tool service may be called: a proto package
// segment and a Go package name at once.
var serviceName = regexp.MustCompile(`^[a-z][a-z0-9]{0,30}$`)

// scaffold is what the templates are rendered from.
type scaffold struct {
	Name        string // hr
	Package     string // hr.v1
	Service     string // HrService
	GoPackage   string // hrv1
	Module      string // example.com/hr
	GarmVersion string // the version of garm the go.mod requires
	Replace     string // a local garm checkout the go.mod replaces garm with; empty: none
	// BufVersion and ProtobufVersion pin buf and protoc-gen-go, the
	// versions this repository's Makefile pins.
	BufVersion, ProtobufVersion string
}

// The generator versions a scaffold pins: buf as tools/go.mod pins it, and
// protobuf as this module requires it (a test holds them equal).
const (
	scaffoldBufVersion      = "v1.75.0"
	scaffoldProtobufVersion = "v1.36.12"
)

// scaffoldProtocGenGo is the version protoc-gen-go reports in the headers of
// the code a scaffold's `go tool buf generate` writes. buf raises the
// scaffold's protobuf to the pre-release it requires, whose protoc-gen-go
// names itself so; tools/go.mod builds the same one for this repository's
// gen/, and a test holds the two equal (decision 0075).
const scaffoldProtocGenGo = "v1.36.12-devel"

// protocGenGoHeader is the line of a protoc-gen-go header naming its version.
var protocGenGoHeader = regexp.MustCompile(`(?m)^// \tprotoc-gen-go v\S+$`)

// newOptions are garm new's flags.
type newOptions struct {
	module, dir, replace string
}

// newFlagSet is garm new's flag set; its usage line is built from it.
func newFlagSet(opts *newOptions) *flag.FlagSet {
	flags := flag.NewFlagSet("garm new toolservice", flag.ContinueOnError)
	flags.StringVar(&opts.module, "module", "", "the Go module `path` (default: example.com/NAME)")
	flags.StringVar(&opts.dir, "dir", "", "the `directory` to write, which must not exist or be empty (default: ./NAME)")
	flags.StringVar(&opts.replace, "replace", "", "replace "+garmModule+" with this local `checkout` in go.mod (default: for a garm built from a checkout, that checkout; --replace= for none)")
	return flags
}

// runNew is `garm new toolservice NAME [flags]`.
func runNew(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var opts newOptions
	flags := newFlagSet(&opts)
	flags.SetOutput(stderr)
	usage := "usage: garm new " + newUsage(flags)
	if len(args) == 0 || args[0] != "toolservice" {
		fmt.Fprintln(stderr, usage)
		return exitUsage
	}
	name, rest := leadingArg(args[1:])
	if err := flags.Parse(rest); errors.Is(err, flag.ErrHelp) {
		return exitOK
	} else if err != nil {
		return exitUsage
	}
	if name == "" && flags.NArg() == 1 {
		name = flags.Arg(0)
	} else if flags.NArg() > 0 || name == "" {
		fmt.Fprintln(stderr, usage)
		return exitUsage
	}
	replaceSet := false
	flags.Visit(func(f *flag.Flag) { replaceSet = replaceSet || f.Name == "replace" })
	_, release := releasedGarm()
	defaulted := false
	if !replaceSet && !release {
		opts.replace, defaulted = builtFrom()
	}
	s, err := newScaffold(name, opts.module, opts.replace)
	if err != nil {
		fmt.Fprintln(stderr, "garm new:", err)
		return exitUsage
	}
	if opts.dir == "" {
		opts.dir = name
	}
	if err := s.create(ctx, opts.dir, stderr); err != nil {
		fmt.Fprintln(stderr, "garm new:", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "wrote the tool service %s (module %s) to %s, its generated code in gen/.\n", s.Package, s.Module, opts.dir)
	fixReplace := ""
	switch {
	case s.Replace != "" && defaulted:
		fmt.Fprintf(stdout, "\ngo.mod replaces %s with %s, the checkout this garm was built from: the scaffold builds only where that path holds garm. Elsewhere, point the replace line at that machine's checkout (go mod edit -replace %s=CHECKOUT), or, once garm is released, drop it (go mod edit -dropreplace %s) and require the release.\n", garmModule, s.Replace, garmModule, garmModule)
	case s.Replace != "":
		fmt.Fprintf(stdout, "\ngo.mod replaces %s with %s: the scaffold builds only where that path holds garm.\n", garmModule, s.Replace)
	case s.GarmVersion == unreleasedGarm:
		fmt.Fprintf(stderr, "garm new: this garm is not a release, so go.mod requires %s %s, which only a replace directive can satisfy: go mod tidy fails until you run the first command below with your garm checkout's path (garm new writes it itself when garm was built by make install in a checkout that is still there)\n", garmModule, unreleasedGarm)
		fixReplace = "  go mod edit -replace " + garmModule + "=/path/to/your/garm/checkout\n"
	}
	fmt.Fprintf(stdout, "\nNext:\n\n  cd %s\n%s  go mod tidy\n  go test ./...\n  garm dev\n\nAfter editing the .proto, `go tool buf generate` regenerates gen/.\n", opts.dir, fixReplace)
	return exitOK
}

func newScaffold(name, module, replace string) (scaffold, error) {
	if !serviceName.MatchString(name) {
		return scaffold{}, fmt.Errorf("the name %q is not a lower-case word of letters and digits (it names the proto package %s.v1 and the Go package)", name, name)
	}
	if module == "" {
		module = "example.com/" + name
	}
	// The path is written into go.mod and into Go imports as it is: what
	// the go command would refuse is refused before anything is written.
	if err := gomodule.CheckPath(module); err != nil {
		return scaffold{}, fmt.Errorf("--module: %w", err)
	}
	if replace != "" {
		abs, err := filepath.Abs(replace)
		if err != nil {
			return scaffold{}, err
		}
		if strings.ContainsFunc(abs, unicode.IsControl) {
			return scaffold{}, fmt.Errorf("--replace: the path %q holds a control character", abs)
		}
		replace = abs
		if strings.ContainsAny(abs, " \t\"'`") {
			replace = strconv.Quote(abs)
		}
	}
	return scaffold{
		Name: name, Package: name + ".v1", Service: strings.ToUpper(name[:1]) + name[1:] + "Service",
		GoPackage: name + "v1", Module: module, GarmVersion: garmVersion(replace), Replace: replace,
		BufVersion: scaffoldBufVersion, ProtobufVersion: scaffoldProtobufVersion,
	}, nil
}

// garmVersion is the version of garm this command was built from, which
// the scaffold requires; a build from a checkout has none, and requires a
// placeholder its replace directive stands for.
func garmVersion(replace string) string {
	if v, ok := releasedGarm(); ok && replace == "" {
		return v
	}
	return unreleasedGarm
}

// unreleasedGarm is the version a scaffold requires of a garm built from a
// checkout, which its replace directive stands for.
const unreleasedGarm = "v0.0.0-00010101000000-000000000000"

// create writes the scaffold and its generated code into a new directory
// beside dir and renames it to dir once every file is written, so a
// failure leaves nothing behind. dir must not exist or be empty.
func (s scaffold) create(ctx context.Context, dir string, diagnostics io.Writer) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s exists and is not empty", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(filepath.Clean(dir))+".garm-new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // nothing once renamed
	if err := s.write(tmp); err != nil {
		return err
	}
	if err := s.generate(ctx, tmp, diagnostics); err != nil {
		return err
	}
	// MkdirTemp made it for its owner alone; the scaffold is a module like any other.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	// An empty dir is replaced; one that gained files meanwhile is not.
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return os.Rename(tmp, dir)
}

// write renders every template into dir, then the annotation protos into
// dir/third_party.
func (s scaffold) write(dir string) error {
	err := fs.WalkDir(scaffoldFiles, "scaffold", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		text, err := scaffoldFiles.ReadFile(path)
		if err != nil {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(path, "scaffold/"), ".tmpl")
		if rel == "proto/service.proto" {
			rel = filepath.Join("proto", s.Name, "v1", s.Name+".proto")
		}
		var out bytes.Buffer
		if err := template.Must(template.New(rel).Parse(string(text))).Execute(&out, s); err != nil {
			return err
		}
		data := out.Bytes()
		if strings.HasSuffix(rel, ".go") {
			if data, err = format.Source(data); err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
		}
		return writeFile(filepath.Join(dir, rel), data)
	})
	if err != nil {
		return err
	}
	for _, src := range []fs.FS{annotations.AuthorProtos, protovalidate.Protos} {
		if err := copyTree(src, filepath.Join(dir, "third_party")); err != nil {
			return err
		}
	}
	return nil
}

// generate writes into dir/gen what `go tool buf generate` would with
// the scaffold's buf.gen.yaml, by running protoc-gen-go and protoc-gen-garm
// in process on the proto compiled from dir/proto and dir/third_party
// (decision 0049).
func (s scaffold) generate(ctx context.Context, dir string, diagnostics io.Writer) error {
	compiler := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			ImportPaths: []string{filepath.Join(dir, "proto"), filepath.Join(dir, "third_party")},
		}),
		SourceInfoMode: protocompile.SourceInfoStandard,
	}
	compiled, err := compiler.Compile(ctx, s.Name+"/v1/"+s.Name+".proto")
	if err != nil {
		return fmt.Errorf("compiling the scaffold's proto: %w", err)
	}
	files := make([]protoreflect.FileDescriptor, len(compiled))
	for i, f := range compiled {
		files[i] = f
	}
	generated, err := generate.GoAndGarm(files, "paths=source_relative", diagnostics)
	if err != nil {
		return err
	}
	for _, f := range generated {
		content := f.Content
		if loc := protocGenGoHeader.FindStringIndex(content); loc != nil && strings.HasPrefix(content, "// Code generated by protoc-gen-go.") {
			content = content[:loc[0]] + "// \tprotoc-gen-go " + scaffoldProtocGenGo + content[loc[1]:]
		}
		if err := writeFile(filepath.Join(dir, "gen", filepath.FromSlash(f.Name)), []byte(content)); err != nil {
			return err
		}
	}
	return nil
}

func copyTree(src fs.FS, dst string) error {
	return fs.WalkDir(src, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(src, path)
		if err != nil {
			return err
		}
		return writeFile(filepath.Join(dst, filepath.FromSlash(path)), data)
	})
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
