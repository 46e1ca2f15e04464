package manifest_test

import (
	"fmt"

	"github.com/garm-dev/garm/catalogue-builder/internal/manifest"
)

func ExampleParse() {
	_, err := manifest.Parse("catalogue.yaml", []byte(`schema: v2
name: calculator
include: proto
taxonmy:
  compartments: [{name: pii-contact}]
`))
	fmt.Println(err)
	// Output:
	// catalogue.yaml:1:9: unsupported schema "v2": this garm-catalogue reads v1
	// catalogue.yaml:3:10: "include" must be a list of directories, not a string
	// catalogue.yaml:4:1: unknown key "taxonmy" (known: schema, name, source, include, taxonomy, limits)
}
