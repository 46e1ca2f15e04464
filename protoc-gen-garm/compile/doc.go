// Package compile turns protobuf descriptors that carry garm annotations into
// everything garm derives from them: the tool model (which methods are tools,
// their names, FQNs, routes, subjects and queue groups), each package's
// descriptor hash, the lint gate's diagnostics, and the plans — per field,
// the resolved policy, the redaction garmd applies and the JSON Schema
// fragment it shows — so that garmd derives no policy, redaction or schema
// when it loads a catalogue. garmd still builds the artifact's descriptors,
// checks every plan against them without recomputing it, and compiles the
// protovalidate rules at mount (docs/decisions/0070, 0076); none of that is
// this package's. Per instance rule it also records what the rule reads
// and its cost bound; the rules are compiled with package instance, the one
// CEL environment garmd also uses, and the taxonomy's attribute declarations
// are read here and judged by lint (L44). A tool's limits are read one way
// for everyone: CheckLimit (lint's L50–L53, the build's check of a limit
// catalogue.yaml makes, the artifact reader's), ResolveLimit (the form the
// catalogue carries), CompareLimits (whether a deployment tightens, and
// what diff calls widening) and LimitWarnings (L54, L55).
//
// It is the one implementation shared by protoc-gen-garm (descriptors from a
// CodeGeneratorRequest, linted in ModuleScope) and garm-catalogue
// (descriptors compiled in process, linted in CatalogueScope), so a tool's
// identity, its plan and the verdict on it are computed the same way by
// every program that needs them. It works on protoreflect descriptors only:
// no protogen, no Go names, no file output. Emitters (Go bindings, plan
// files, catalogue artifacts) live with the programs that write them and
// take the model and plans as their input.
//
// Annotations are read against the vocabulary linked into this build; an
// annotation using a field this build does not know is refused, because a
// declaration that nothing enforces must not pass silently. Options decoded
// with their extensions left unresolved (as the artifact reader decodes
// them) are read from their undecoded fields; any other options are
// encoded and read back whole, with the same answer (docs/decisions/0141).
// Plans are built
// only from a model that lint accepted: PlanMessage fails where lint would
// refuse rather than guess.
package compile
