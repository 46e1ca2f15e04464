package generate

import (
	"fmt"
	"io"

	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"github.com/garm-dev/garm/protoc-gen-garm/internal/plugin"
	gengo "google.golang.org/protobuf/cmd/protoc-gen-go/internal_gengo"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/pluginpb"
)

// File is one generated file: its path relative to the output directory
// and its content.
type File struct {
	Name    string
	Content string
}

// GoAndGarm generates, for files and with the same parameter for both
// plugins (for example "paths=source_relative"), what protoc-gen-go and
// then protoc-gen-garm write. protoc-gen-garm's diagnostics go to
// diagnostics; on any lint error no file is returned.
func GoAndGarm(files []protoreflect.FileDescriptor, parameter string, diagnostics io.Writer) ([]File, error) {
	goFiles, err := runPlugin(files, parameter, nil, func(gen *protogen.Plugin) error {
		gen.SupportedFeatures = gengo.SupportedFeatures
		gen.SupportedEditionsMinimum = gengo.SupportedEditionsMinimum
		gen.SupportedEditionsMaximum = gengo.SupportedEditionsMaximum
		for _, f := range gen.Files {
			if f.Generate {
				gengo.GenerateFile(gen, f)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("protoc-gen-go: %w", err)
	}
	params := plugin.DefaultParams()
	garmFiles, err := runPlugin(files, parameter, params.Set, func(gen *protogen.Plugin) error {
		return plugin.Run(gen, params, diagnostics)
	})
	if err != nil {
		return nil, fmt.Errorf("protoc-gen-garm: %w", err)
	}
	return append(goFiles, garmFiles...), nil
}

// runPlugin runs one generator on a request for files, as its process
// would: the request crosses the wire format once.
func runPlugin(files []protoreflect.FileDescriptor, parameter string, paramFunc func(name, value string) error, generate func(*protogen.Plugin) error) ([]File, error) {
	req, err := request(files, parameter)
	if err != nil {
		return nil, err
	}
	gen, err := protogen.Options{ParamFunc: paramFunc}.New(req)
	if err != nil {
		return nil, err
	}
	if err := generate(gen); err != nil {
		gen.Error(err)
	}
	resp := gen.Response()
	if resp.Error != nil {
		return nil, fmt.Errorf("%s", resp.GetError())
	}
	out := make([]File, 0, len(resp.File))
	for _, f := range resp.File {
		if f.GetInsertionPoint() != "" {
			return nil, fmt.Errorf("%s: insertion points are not supported", f.GetName())
		}
		out = append(out, File{Name: f.GetName(), Content: f.GetContent()})
	}
	return out, nil
}

// request is the CodeGeneratorRequest buf sends: the files to generate and
// every file they import, dependencies first.
func request(files []protoreflect.FileDescriptor, parameter string) (*pluginpb.CodeGeneratorRequest, error) {
	req := &pluginpb.CodeGeneratorRequest{Parameter: proto.String(parameter)}
	for _, f := range files {
		req.FileToGenerate = append(req.FileToGenerate, f.Path())
	}
	for _, f := range compile.WithImports(files) {
		req.ProtoFile = append(req.ProtoFile, protodesc.ToFileDescriptorProto(f))
	}
	raw, err := proto.Marshal(req)
	if err != nil {
		return nil, err
	}
	decoded := new(pluginpb.CodeGeneratorRequest)
	return decoded, proto.Unmarshal(raw, decoded)
}
