package protovalidate

import "embed"

// Protos holds buf/validate/validate.proto under its import path.
//
//go:embed buf/validate/validate.proto
var Protos embed.FS
