package fieldpath_test

import (
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// treeFile declares fix.Tree, a message that holds itself singly, in a list
// and in a map's values, beside a string, a list and a map of strings, and
// an integer without presence, so paths of any depth go through every kind
// of field a plan rule can cross.
const treeFile = `
name: "fieldpath/tree.proto"
package: "fix"
syntax: "proto3"
message_type {
  name: "Tree"
  field { name: "leaf" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "leaf" }
  field { name: "child" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".fix.Tree" json_name: "child" }
  field { name: "children" number: 3 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".fix.Tree" json_name: "children" }
  field { name: "by_name" number: 4 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".fix.Tree.ByNameEntry" json_name: "byName" }
  field { name: "tags" number: 5 label: LABEL_REPEATED type: TYPE_STRING json_name: "tags" }
  field { name: "labels" number: 6 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".fix.Tree.LabelsEntry" json_name: "labels" }
  field { name: "count" number: 7 label: LABEL_OPTIONAL type: TYPE_INT32 json_name: "count" }
  nested_type {
    name: "ByNameEntry"
    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "key" }
    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".fix.Tree" json_name: "value" }
    options { map_entry: true }
  }
  nested_type {
    name: "LabelsEntry"
    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "key" }
    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "value" }
    options { map_entry: true }
  }
}
`

// Field numbers of fix.Tree.
const (
	leaf     = 1
	child    = 2
	children = 3
	byName   = 4
	tags     = 5
	labels   = 6
	count    = 7
)

func treeDescriptor(tb testing.TB) protoreflect.MessageDescriptor {
	tb.Helper()
	fdp := &descriptorpb.FileDescriptorProto{}
	if err := prototext.Unmarshal([]byte(treeFile), fdp); err != nil {
		tb.Fatal(err)
	}
	file, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return file.Messages().ByName("Tree")
}

// tree is a fix.Tree holding the given protojson.
func tree(tb testing.TB, json string) protoreflect.Message {
	tb.Helper()
	m := dynamicpb.NewMessage(treeDescriptor(tb))
	if err := protojson.Unmarshal([]byte(json), m); err != nil {
		tb.Fatalf("tree %s: %v", json, err)
	}
	return m
}
