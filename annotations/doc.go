// Package annotations holds garm's annotation protos, and embeds the one a
// tool author imports (garm/tool/v1/tool.proto) so that `garm new` can
// write it into a scaffold: an author's buf resolves it with no registry,
// at the very version of garm their go.mod requires.
package annotations
