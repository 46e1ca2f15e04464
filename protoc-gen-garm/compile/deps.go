package compile

import "google.golang.org/protobuf/reflect/protoreflect"

// WithImports is files and every file they import, each once, dependencies
// before the files that import them, in the order the files and their
// imports are given: the order protoc and buf send a plugin its files, and
// the order a catalogue's descriptor set holds them.
func WithImports(files []protoreflect.FileDescriptor) []protoreflect.FileDescriptor {
	var out []protoreflect.FileDescriptor
	seen := map[string]bool{}
	var add func(f protoreflect.FileDescriptor)
	add = func(f protoreflect.FileDescriptor) {
		if seen[f.Path()] {
			return
		}
		seen[f.Path()] = true
		imports := f.Imports()
		for i := 0; i < imports.Len(); i++ {
			add(imports.Get(i).FileDescriptor)
		}
		out = append(out, f)
	}
	for _, f := range files {
		add(f)
	}
	return out
}
