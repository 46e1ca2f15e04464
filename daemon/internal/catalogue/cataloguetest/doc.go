// Package cataloguetest builds real catalogues for garmd's tests: from
// .proto include roots, from the calculator example, or from a generated
// contract of any number of tools, always through the catalogue builder's
// own pipeline (catalogue-builder/builder), then loaded with
// catalogue.Load. Tests only: nothing in garmd imports it.
//
// It fakes nothing. A generation it returns is one garmd would load from
// the same bytes.
package cataloguetest
