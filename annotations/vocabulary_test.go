package annotations_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/linker"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// These tests read the vocabulary from source, not from gen/, so that they
// judge the .proto files themselves: a number that moved or an element left
// undocumented fails here before anything is generated from it.

// TestEveryVocabularyElementIsDocumented holds the vocabulary to its own rule:
// every message, field, oneof, enum, enum value and extension says what it
// means and who reads it, because tool authors, generators and garmd all learn
// the contract from these comments.
func TestEveryVocabularyElementIsDocumented(t *testing.T) {
	var undocumented []string
	for _, file := range compileVocabulary(t) {
		if !strings.HasPrefix(file.Path(), "garm/") {
			continue
		}
		locations := file.SourceLocations()
		walkVocabulary(file, func(name string, d protoreflect.Descriptor) {
			if strings.TrimSpace(locations.ByDescriptor(d).LeadingComments) == "" {
				undocumented = append(undocumented, name)
			}
		})
	}
	if len(undocumented) > 0 {
		slices.Sort(undocumented)
		t.Errorf("%d vocabulary elements have no leading comment:\n  %s",
			len(undocumented), strings.Join(undocumented, "\n  "))
	}
}

// TestVocabularyNumbersMatchTheSpec pins every number the spec fixes (design
// §3.1 and §3.3–§3.7): a .proto written against the vocabulary must keep
// compiling and meaning the same thing, so a renumbered, renamed, missing or
// unannounced element is a failure, whichever side it is on.
func TestVocabularyNumbersMatchTheSpec(t *testing.T) {
	want := parseSpecTable(t, specNumbers)
	got := vocabularyNumbers(compileVocabulary(t))

	var problems []string
	report := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	for name, number := range want.numbers {
		switch gotNumber, ok := got.numbers[name]; {
		case !ok:
			report("%s: in the spec as %d, not in the vocabulary", name, number)
		case gotNumber != number:
			report("%s: numbered %d, the spec says %d", name, gotNumber, number)
		case got.extendees[name] != want.extendees[name]:
			report("%s: extends %s, the spec says %s",
				name, extendeeText(got.extendees[name]), extendeeText(want.extendees[name]))
		}
	}
	for name, number := range got.numbers {
		if _, ok := want.numbers[name]; !ok {
			report("%s: numbered %d in the vocabulary, not in the spec", name, number)
		}
	}
	for name, ranges := range want.reserved {
		if got.reserved[name] != ranges {
			report("%s: reserves %q, the spec says %q", name, got.reserved[name], ranges)
		}
	}
	for name, ranges := range got.reserved {
		if _, ok := want.reserved[name]; !ok {
			report("%s: reserves %q, the spec reserves nothing there", name, ranges)
		}
	}
	for name := range want.types {
		if !got.types[name] {
			report("%s: a message or enum in the spec, not in the vocabulary", name)
		}
	}
	for name := range got.types {
		if !want.types[name] {
			report("%s: a message or enum in the vocabulary, not in the spec", name)
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		t.Errorf("the vocabulary differs from the spec in %d places:\n  %s",
			len(problems), strings.Join(problems, "\n  "))
	}
}

// numberTable is what the spec table says, or what the compiled vocabulary
// holds, in the same shape so the two compare directly.
type numberTable struct {
	numbers   map[string]int32  // field, enum value or extension -> number
	extendees map[string]string // extension -> the options message it extends
	reserved  map[string]string // message or enum -> canonical reserved ranges
	types     map[string]bool   // every message and enum
}

func newNumberTable() numberTable {
	return numberTable{
		numbers:   map[string]int32{},
		extendees: map[string]string{},
		reserved:  map[string]string{},
		types:     map[string]bool{},
	}
}

func parseSpecTable(t *testing.T, text string) numberTable {
	t.Helper()
	table := newNumberTable()
	for i, line := range strings.Split(text, "\n") {
		words := strings.Fields(line)
		if len(words) == 0 || strings.HasPrefix(words[0], "#") {
			continue
		}
		name := words[0]
		bad := func(why string) { t.Fatalf("spec table line %d %q: %s", i, line, why) }
		switch {
		case len(words) == 2 && words[1] == "empty":
			table.types[name] = true
		case len(words) >= 3 && words[1] == "reserved":
			var reserved []int32
			for _, word := range words[2:] {
				lo, hi, isRange := strings.Cut(word, "-")
				if !isRange {
					hi = lo
				}
				from, errFrom := strconv.ParseInt(lo, 10, 32)
				to, errTo := strconv.ParseInt(hi, 10, 32)
				if errFrom != nil || errTo != nil || from > to {
					bad("a reserved number is n or lo-hi")
				}
				for n := from; n <= to; n++ {
					reserved = append(reserved, int32(n))
				}
			}
			table.reserved[name] = canonicalRanges(reserved)
			table.types[name] = true
		case len(words) == 2 || (len(words) == 4 && words[2] == "extends"):
			number, err := strconv.ParseInt(words[1], 10, 32)
			if err != nil {
				bad("not a number")
			}
			if _, dup := table.numbers[name]; dup {
				bad("listed twice")
			}
			table.numbers[name] = int32(number)
			if len(words) == 4 {
				table.extendees[name] = words[3]
			} else {
				table.types[name[:strings.LastIndex(name, ".")]] = true
			}
		default:
			bad("not one of the line forms")
		}
	}
	return table
}

// vocabularyNumbers collects, from every file under garm/, the numbers of
// fields, enum values and extensions, the reserved ranges, and every message
// and enum, named as the spec table names them.
func vocabularyNumbers(files linker.Files) numberTable {
	table := newNumberTable()
	for _, file := range files {
		if !strings.HasPrefix(file.Path(), "garm/") {
			continue
		}
		walkVocabulary(file, func(name string, d protoreflect.Descriptor) {
			switch d := d.(type) {
			case protoreflect.MessageDescriptor:
				table.types[name] = true
				var reserved []int32
				for i := 0; i < d.ReservedRanges().Len(); i++ {
					r := d.ReservedRanges().Get(i) // [from, to)
					for n := r[0]; n < r[1]; n++ {
						reserved = append(reserved, int32(n))
					}
				}
				if len(reserved) > 0 {
					table.reserved[name] = canonicalRanges(reserved)
				}
			case protoreflect.EnumDescriptor:
				table.types[name] = true
				var reserved []int32
				for i := 0; i < d.ReservedRanges().Len(); i++ {
					r := d.ReservedRanges().Get(i) // [from, to]
					for n := r[0]; n <= r[1]; n++ {
						reserved = append(reserved, int32(n))
					}
				}
				if len(reserved) > 0 {
					table.reserved[name] = canonicalRanges(reserved)
				}
			case protoreflect.FieldDescriptor:
				table.numbers[name] = int32(d.Number())
				if d.IsExtension() {
					table.extendees[name] = string(d.ContainingMessage().FullName())
				}
			case protoreflect.EnumValueDescriptor:
				table.numbers[name] = int32(d.Number())
			}
		})
	}
	return table
}

// walkVocabulary calls visit with every message, field, oneof, enum, enum value
// and extension declared in file, named by its full name except that enum
// values are named inside their enum. Map entries and the oneofs proto3
// optional synthesizes are not declared by the author and are skipped.
func walkVocabulary(file protoreflect.FileDescriptor, visit func(name string, d protoreflect.Descriptor)) {
	var walkEnums func(protoreflect.EnumDescriptors)
	walkEnums = func(enums protoreflect.EnumDescriptors) {
		for i := 0; i < enums.Len(); i++ {
			enum := enums.Get(i)
			visit(string(enum.FullName()), enum)
			for j := 0; j < enum.Values().Len(); j++ {
				value := enum.Values().Get(j)
				visit(string(enum.FullName())+"."+string(value.Name()), value)
			}
		}
	}
	walkExtensions := func(extensions protoreflect.ExtensionDescriptors) {
		for i := 0; i < extensions.Len(); i++ {
			visit(string(extensions.Get(i).FullName()), extensions.Get(i))
		}
	}
	var walkMessages func(protoreflect.MessageDescriptors)
	walkMessages = func(messages protoreflect.MessageDescriptors) {
		for i := 0; i < messages.Len(); i++ {
			message := messages.Get(i)
			if message.IsMapEntry() {
				continue
			}
			visit(string(message.FullName()), message)
			for j := 0; j < message.Fields().Len(); j++ {
				visit(string(message.Fields().Get(j).FullName()), message.Fields().Get(j))
			}
			for j := 0; j < message.Oneofs().Len(); j++ {
				if oneof := message.Oneofs().Get(j); !oneof.IsSynthetic() {
					visit(string(oneof.FullName()), oneof)
				}
			}
			walkEnums(message.Enums())
			walkExtensions(message.Extensions())
			walkMessages(message.Messages())
		}
	}
	walkEnums(file.Enums())
	walkExtensions(file.Extensions())
	walkMessages(file.Messages())
}

// compileVocabulary compiles every .proto under this directory from source,
// with source info so leading comments can be read, and fails the test with
// every compile error at once.
func compileVocabulary(t *testing.T) linker.Files {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(".", func(path string, entry fs.DirEntry, err error) error {
		if err == nil && !entry.IsDir() && strings.HasSuffix(path, ".proto") {
			paths = append(paths, filepath.ToSlash(path))
		}
		return err
	})
	if err != nil {
		t.Fatalf("listing the vocabulary: %v", err)
	}
	if len(paths) == 0 {
		t.Fatal("no .proto files under annotations/")
	}
	var compileErrors []string
	compiler := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			ImportPaths: []string{"."},
		}),
		SourceInfoMode: protocompile.SourceInfoStandard,
		Reporter: reporter.NewReporter(func(err reporter.ErrorWithPos) error {
			compileErrors = append(compileErrors, err.Error())
			return nil
		}, nil),
	}
	files, err := compiler.Compile(context.Background(), paths...)
	if err != nil {
		t.Fatalf("compiling the vocabulary: %v\n  %s", err, strings.Join(compileErrors, "\n  "))
	}
	return files
}

// canonicalRanges spells a set of numbers as sorted runs ("2-3 11 15"), so
// that "reserved 2, 3" and "reserved 2 to 3" compare equal.
func canonicalRanges(numbers []int32) string {
	numbers = slices.Clone(numbers)
	slices.Sort(numbers)
	numbers = slices.Compact(numbers)
	var runs []string
	for i := 0; i < len(numbers); {
		j := i
		for j+1 < len(numbers) && numbers[j+1] == numbers[j]+1 {
			j++
		}
		if i == j {
			runs = append(runs, strconv.Itoa(int(numbers[i])))
		} else {
			runs = append(runs, fmt.Sprintf("%d-%d", numbers[i], numbers[j]))
		}
		i = j + 1
	}
	return strings.Join(runs, " ")
}

func extendeeText(extendee string) string {
	if extendee == "" {
		return "nothing"
	}
	return extendee
}
