package plugin

import (
	"fmt"
	"io"

	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

// Run generates everything for the files gen was asked to generate. Every
// diagnostic is written to diagnostics; on any lint error Run returns an
// error and adds no file.
func Run(gen *protogen.Plugin, params Params, diagnostics io.Writer) error {
	gen.SupportedFeatures = uint64(pluginpb.CodeGeneratorResponse_FEATURE_PROTO3_OPTIONAL |
		pluginpb.CodeGeneratorResponse_FEATURE_SUPPORTS_EDITIONS)
	gen.SupportedEditionsMinimum = descriptorpb.Edition_EDITION_PROTO2
	gen.SupportedEditionsMaximum = descriptorpb.Edition_EDITION_2023

	var files []*protogen.File
	var descs []protoreflect.FileDescriptor
	for _, f := range gen.Files {
		if f.Generate {
			files = append(files, f)
			descs = append(descs, f.Desc)
		}
	}
	model, err := compile.Build(descs)
	if err != nil {
		return err
	}
	diags := compile.Lint(model, compile.ModuleScope)
	if _, err := io.WriteString(diagnostics, diags.String()); err != nil {
		return err
	}
	if errors := diags.Errors(); errors > 0 {
		return fmt.Errorf("refusing to generate: %d lint error(s), printed above; no file was written", errors)
	}
	var plans []planFile
	if params.Plans {
		if plans, err = buildPlanFiles(model); err != nil {
			return fmt.Errorf("refusing to generate: %w; no file was written", err)
		}
	}
	if err := generateBindings(gen, files, model, params); err != nil {
		return err
	}
	return writePlanFiles(gen, plans)
}
