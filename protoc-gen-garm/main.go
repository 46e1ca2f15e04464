// Command protoc-gen-garm is the protoc plugin that turns garm-annotated
// .proto files into the Go bindings a tool service implements. buf generate
// runs it beside protoc-gen-go; see the README for its parameters.
package main

import (
	"fmt"
	"os"

	"github.com/garm-dev/garm/protoc-gen-garm/internal/plugin"
	"google.golang.org/protobuf/compiler/protogen"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "protoc-gen-garm is a protoc plugin: run it with buf generate (parameters: paths, module, contract_version, plans)")
		os.Exit(2)
	}
	params := plugin.DefaultParams()
	protogen.Options{ParamFunc: params.Set}.Run(func(gen *protogen.Plugin) error {
		return plugin.Run(gen, params, os.Stderr)
	})
}
