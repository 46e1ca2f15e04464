// Package compile turns protobuf descriptors that carry garm annotations into
// garm's tool model: which methods are tools, their names, FQNs, routes,
// subjects and queue groups, and each package's descriptor hash — and checks
// that model against the lint rules before anything is emitted from it.
//
// It is the one implementation shared by protoc-gen-garm (descriptors from a
// CodeGeneratorRequest) and garm-catalogue (descriptors compiled in process),
// so a tool's identity is computed the same way by every program that needs
// it. It works on protoreflect descriptors only: no protogen, no Go names, no
// file output. Emitters (Go bindings, plan files) live with the programs that
// write them and take the model as their input.
//
// Annotations are read against the vocabulary linked into this build; an
// annotation using a field this build does not know is refused, because a
// declaration that nothing enforces must not pass silently.
package compile
