// Package manifest reads catalogue.yaml, the file that tells garm-catalogue
// build and lint which proto roots make up a catalogue, what to record as its
// provenance and, optionally, the whole taxonomy of compartments, tool
// sets and principal attributes, and the limits the deployment adds to its
// tools or tightens. [Load] reads a file and checks that every include directory exists;
// [Parse] does the same reading on bytes without touching the filesystem.
//
// It owns the manifest's shape: one YAML document whose top level is a
// mapping; schema (required, only [SchemaV1]), name and source (strings),
// include (a non-empty list of directories) and taxonomy (compartments and
// tool_sets, each a list of {name, description}; attributes, a list of
// {name, description, type, max_items, max_len} whose type is string, int,
// bool or string_list — whether a declaration is sound is lint's L44) and
// limits (a list of entries, each an id, exactly one of tool, tool_set and
// all_tools: true, and the terms it sets: description, key — parts spelled
// as [KeyParts] —, rate {count, window — one of [Windows]}, concurrency
// {in_flight}, cost, soft; whether an entry adds a sound limit or tightens
// the contract's is the build's to judge, against each tool). It refuses, with a
// position for each: YAML that does not parse, a second document, unknown or
// duplicate keys at any level, a value of the wrong kind (a null where a
// string is expected included), anchors, aliases, merge keys and explicit
// tags, a missing or unsupported schema, a missing or empty include list, an
// empty include entry, two entries that name the same directory, and a
// present but empty taxonomy or a declaration without a name. Every problem
// is reported at once, as [Problems], one `<path>:<line>:<column>: <message>`
// line each, sorted by position.
//
// Include directories are resolved against the manifest's own directory,
// never the working directory, so `garm-catalogue build -f sub/catalogue.yaml`
// reads the same sources from wherever it is run; absolute paths are taken as
// written. Nothing is expanded: not `~`, not environment variables.
//
// Deliberately not here: the format of compartment and tool-set names (lint
// rule L28) and a name declared twice (L29, which accepts a repeat with the
// same description) belong to the lint over the whole catalogue, which also
// enforces that files add nothing to a manifest's taxonomy; compiling the
// protos is the builder's. This package only says whether the manifest is a
// well-formed one.
//
// Why so strict: a manifest is reviewed like code and decides what a
// catalogue is allowed to declare. A misspelt key (`taxonmy:`) that was
// silently ignored would drop the whole taxonomy and let files declare their
// own; an alias or a tag would make the file mean something other than what
// it reads as. A manifest is plain data, so anything beyond plain data is an
// error, and all errors come at once so an author fixes the file in one pass.
package manifest
