// Package protovalidate embeds the workspace's copy of
// buf/validate/validate.proto (its test proves it is the file linked into
// protovalidate-go), so that `garm new` can write it into a scaffold and an
// author's buf resolves it with no registry.
package protovalidate
