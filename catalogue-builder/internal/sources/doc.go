// Package sources turns what a catalogue is built from into linked
// descriptors: the .proto files under a manifest's include roots, compiled
// in process with protocompile, or a buf image or FileDescriptorSet built
// elsewhere.
//
// The garm vocabulary (garm/...), protovalidate's rules (buf/validate/...)
// and the well-known types (google/protobuf/...) always resolve from the
// descriptors linked into this binary, so a tool author vendors nothing and
// every catalogue is read against exactly the vocabulary its builder
// enforces. A source file at one of those paths is refused rather than
// silently shadowed or silently preferred: two copies of the vocabulary that
// could disagree must not meet in one catalogue.
//
// This package compiles and resolves; it decides nothing about tools. Which
// methods are tools and whether they pass is protoc-gen-garm/compile's
// judgement, made over the Set this package returns.
package sources
