// Package plugin is protoc-gen-garm's pipeline: it reads the plugin's own
// parameters, builds the tool model with package compile from the files buf
// asked for, runs the lint gate, and only when the gate passes hands the
// model to the emitters — the Go bindings here, one file per Go package.
//
// It owns what depends on protogen (Go names, imports, output paths) and
// nothing about what a tool is: that is compile's, shared with
// garm-catalogue. On any lint error it prints every diagnostic and writes no
// file at all.
package plugin
