// Package generate runs protoc-gen-go and protoc-gen-garm in process: the
// files `buf generate` would write with a tool service's buf.gen.yaml, from
// descriptors already compiled, with no plugin process and no buf.
//
// `garm new toolservice` uses it so that a fresh scaffold builds before its
// author has compiled buf (decision 0049). Each generator sees its own
// CodeGeneratorRequest, marshalled and decoded once as a plugin process would
// decode it, so the output is the output of the plugins at the versions
// linked into this binary.
//
// It does not compile .proto sources or lint them beyond what protoc-gen-garm
// refuses; it writes no file: the caller decides where the answer goes.
package generate
