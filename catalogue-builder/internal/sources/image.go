package sources

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// bufImageExtension is the field number buf adds to each file of an image
// (buf.alpha.image.v1.ImageFile.buf_extension); otherwise an image is a
// FileDescriptorSet on the wire.
const bufImageExtension = 8042

// FromImage reads a buf image or a FileDescriptorSet. It must be
// self-contained (built with its imports); the files at the vocabulary's
// paths are replaced by the linked vocabulary, and every other file is one of
// the catalogue's own. Source information, when the image kept it, becomes
// field docs as it does for sources.
func FromImage(data []byte) (*Set, error) {
	var fds descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(data, &fds); err != nil {
		return nil, Problems{fmt.Sprintf("image: not a buf image or FileDescriptorSet: %v", err)}
	}
	set := &Set{Compiler: "FileDescriptorSet"}
	byName := map[string]*descriptorpb.FileDescriptorProto{}
	var problems Problems
	for _, f := range fds.GetFile() {
		if hasField(f.ProtoReflect().GetUnknown(), bufImageExtension) {
			set.Compiler = "buf image"
		}
		f.ProtoReflect().SetUnknown(nil)
		switch {
		case f.GetName() == "":
			problems = append(problems, "image: a file without a name")
		case byName[f.GetName()] != nil:
			problems = append(problems, fmt.Sprintf("image: %s appears twice", f.GetName()))
		default:
			byName[f.GetName()] = f
		}
	}
	if len(byName) == 0 && len(problems) == 0 {
		problems = append(problems, "image: holds no file")
	}
	if len(problems) > 0 {
		return nil, problems
	}
	r := &imageResolver{byName: byName, files: new(protoregistry.Files), state: map[string]int{}}
	names := make([]string, 0, len(byName))
	for name := range byName {
		if !IsLinkedPath(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		fd, err := r.resolve(name, name)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		set.Files = append(set.Files, fd)
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return set, nil
}

type imageResolver struct {
	byName map[string]*descriptorpb.FileDescriptorProto
	files  *protoregistry.Files
	// state is 1 while a file's imports are being resolved, 2 once it is
	// registered.
	state map[string]int
}

// resolve links the named file after its imports; importer names who asked,
// for the message when the file is missing.
func (r *imageResolver) resolve(name, importer string) (protoreflect.FileDescriptor, error) {
	switch r.state[name] {
	case 1:
		return nil, fmt.Errorf("image: %s imports itself through a cycle", name)
	case 2:
		return r.files.FindFileByPath(name)
	}
	if fd, ok := Linked(name); ok {
		if err := r.register(fd); err != nil {
			return nil, err
		}
		return fd, nil
	}
	fdp := r.byName[name]
	if fdp == nil {
		return nil, fmt.Errorf("image: %s imports %s, which the image does not hold; build the image with its imports", importer, name)
	}
	r.state[name] = 1
	for _, dep := range fdp.GetDependency() {
		if _, err := r.resolve(dep, name); err != nil {
			return nil, err
		}
	}
	fd, err := protodesc.NewFile(fdp, r.files)
	if err != nil {
		return nil, fmt.Errorf("image: %s: %v", name, err)
	}
	r.state[name] = 2
	return fd, r.files.RegisterFile(fd)
}

// register adds a linked file and, first, the linked files it imports.
func (r *imageResolver) register(fd protoreflect.FileDescriptor) error {
	if r.state[fd.Path()] == 2 {
		return nil
	}
	r.state[fd.Path()] = 2
	imports := fd.Imports()
	for i := 0; i < imports.Len(); i++ {
		if err := r.register(imports.Get(i).FileDescriptor); err != nil {
			return err
		}
	}
	return r.files.RegisterFile(fd)
}

// hasField reports whether raw wire bytes hold a field with the number.
func hasField(raw []byte, number protowire.Number) bool {
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 {
			return false
		}
		if num == number {
			return true
		}
		m := protowire.ConsumeFieldValue(num, typ, raw[n:])
		if m < 0 {
			return false
		}
		raw = raw[n+m:]
	}
	return false
}
