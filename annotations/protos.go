package annotations

import "embed"

// AuthorProtos holds garm/tool/v1/tool.proto, the file a tool's proto
// imports, under its import path.
//
//go:embed garm/tool/v1/tool.proto
var AuthorProtos embed.FS
