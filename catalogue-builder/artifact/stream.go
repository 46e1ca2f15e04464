package artifact

import (
	"errors"

	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// A reader that serves a catalogue (garmd) needs its descriptors built,
// not the descriptor set they were built from: decoding the whole set
// first holds every file's descriptor protos, as large as the descriptors
// themselves, until the last file is built, and the collector scans them
// all the while. ReadToServe instead keeps each file as its bytes, decodes
// it when its descriptors are built, and drops it then. What it accepts
// and refuses is exactly what Read accepts and refuses.

// Field numbers read on their own when serving.
const (
	catalogueFieldDocsField = 6
	setFileField            = 1 // google.protobuf.FileDescriptorSet.file
	fileNameField           = 1 // google.protobuf.FileDescriptorProto.name
	fileDependencyField     = 3 // google.protobuf.FileDescriptorProto.dependency
)

// encodedFile is one file of an artifact's descriptor set: its name and
// imports, read from its bytes, and either its bytes, decoded only when
// its descriptors are built, or the file already decoded.
type encodedFile struct {
	name    string
	imports []string
	raw     []byte
	decoded *descriptorpb.FileDescriptorProto
	// key, when keyed, is what the file's descriptors are built from
	// (keyFile).
	key   digestKey
	keyed bool
}

// malformedError is a file of the descriptor set whose bytes proto does
// not decode: the artifact is not a catalogue.
type malformedError struct{ err error }

func (e *malformedError) Error() string { return e.err.Error() }
func (e *malformedError) Unwrap() error { return e.err }

// take is the file decoded, and forgets it: once its descriptors are
// built, nothing needs the proto again.
func (f *encodedFile) take() (*descriptorpb.FileDescriptorProto, error) {
	fdp := f.decoded
	if fdp == nil {
		fdp = new(descriptorpb.FileDescriptorProto)
		if err := (proto.UnmarshalOptions{Resolver: optionsUnresolved}).Unmarshal(f.raw, fdp); err != nil {
			return nil, &malformedError{err}
		}
	}
	f.raw, f.decoded = nil, nil
	return fdp, nil
}

// decodedFiles are the files of a decoded set, as encodedFiles.
func decodedFiles(set *descriptorpb.FileDescriptorSet) []encodedFile {
	files := make([]encodedFile, len(set.GetFile()))
	for i, fdp := range set.GetFile() {
		files[i] = encodedFile{name: fdp.GetName(), imports: fdp.GetDependency(), decoded: fdp}
	}
	return files
}

// splitCatalogue decodes data into c as unmarshalCatalogue does, except
// that the descriptor set is not decoded but split into its files' bytes,
// and the field docs are decoded (so bytes that do not decode are refused
// as before) and not kept: c.Files and c.FieldDocs stay nil. A set whose
// records are not all well-formed files is decoded whole, so proto decides
// what it means, as it would have.
//
// Each plan record (one package's plans) is decoded on its own, which is
// what decoding them together gives a repeated field, and keyed by the
// SHA-256 of its bytes; a record serving holds under the same key is not
// decoded again but taken from serving (decodePlans).
func splitCatalogue(data []byte, c *cataloguev1.Catalogue, serving *Built) ([]encodedFile, *readPlans, error) {
	opts := proto.UnmarshalOptions{Resolver: optionsUnresolved}
	var sets, docs, plans [][]byte // record values, whole records, and values
	var setRecords, rest spans
	for at := 0; at < len(data); {
		num, typ, n := protowire.ConsumeField(data[at:])
		if n < 0 {
			return nil, nil, opts.Unmarshal(data, c)
		}
		switch {
		case num == catalogueFilesField && typ == protowire.BytesType:
			_, _, m := protowire.ConsumeTag(data[at:])
			v, _ := protowire.ConsumeBytes(data[at+m:])
			sets = append(sets, v)
			setRecords.add(at, at+n)
		case num == cataloguePlansField && typ == protowire.BytesType:
			_, _, m := protowire.ConsumeTag(data[at:])
			v, _ := protowire.ConsumeBytes(data[at+m:])
			plans = append(plans, v)
		case num == catalogueFieldDocsField && typ == protowire.BytesType:
			docs = append(docs, data[at:at+n])
		default:
			rest.add(at, at+n)
		}
		at += n
	}
	var read *readPlans
	var docsKey digestKey
	var files []encodedFile
	jobs := []func() error{
		func() (err error) {
			if files, err = splitSets(sets); errors.Is(err, errNotSplit) {
				var fromFiles cataloguev1.Catalogue
				if err = opts.Unmarshal(setRecords.bytes(data), &fromFiles); err == nil {
					files = decodedFiles(fromFiles.GetFiles())
				}
			}
			return err
		},
		func() (err error) { read, err = decodePlans(plans, serving); return err },
		func() (err error) { docsKey, err = serving.checkDocs(docs); return err },
		func() error { return opts.Unmarshal(rest.bytes(data), c) },
	}
	if err := forEach(len(jobs), func(i int) error { return jobs[i]() }); err != nil {
		return nil, nil, err
	}
	if len(read.plans) > 0 {
		c.Plans = read.plans
	}
	read.docs = docsKey
	return files, read, nil
}

// errNotSplit says a descriptor set holds something other than well-formed
// files, and must be decoded whole.
var errNotSplit = errors.New("the descriptor set is not only files")

// splitSets splits the values of the catalogue's descriptor-set records
// (each a FileDescriptorSet; several merge into one, their files in
// order) into their files, reading each file's name and imports.
func splitSets(sets [][]byte) ([]encodedFile, error) {
	var files []encodedFile
	for _, set := range sets {
		for len(set) > 0 {
			num, typ, n := protowire.ConsumeTag(set)
			if n < 0 || num != setFileField || typ != protowire.BytesType {
				return nil, errNotSplit
			}
			raw, m := protowire.ConsumeBytes(set[n:])
			if m < 0 {
				return nil, errNotSplit
			}
			f, err := newEncodedFile(raw)
			if err != nil {
				return nil, err
			}
			files = append(files, f)
			set = set[n+m:]
		}
	}
	return files, nil
}

// newEncodedFile reads a file's name (the last one recorded, as proto
// reads it) and imports from its bytes. A file whose top level is not
// plainly well formed is decoded now, so proto decides what it holds.
func newEncodedFile(raw []byte) (encodedFile, error) {
	f := encodedFile{raw: raw}
	for b := raw; len(b) > 0; {
		num, typ, n := protowire.ConsumeField(b)
		if n < 0 || (num == fileNameField || num == fileDependencyField) && typ != protowire.BytesType {
			fdp, err := f.take()
			if err != nil {
				return encodedFile{}, err
			}
			return encodedFile{name: fdp.GetName(), imports: fdp.GetDependency(), decoded: fdp}, nil
		}
		if num == fileNameField || num == fileDependencyField {
			_, _, m := protowire.ConsumeTag(b)
			v, _ := protowire.ConsumeBytes(b[m:])
			if num == fileNameField {
				f.name = string(v)
			} else {
				f.imports = append(f.imports, string(v))
			}
		}
		b = b[n:]
	}
	return f, nil
}

// checkFieldDocs decodes the field-docs records one by one into one map,
// emptied after each: what decoding them whole would refuse, it refuses,
// and nothing is kept.
func checkFieldDocs(records [][]byte) error {
	opts := proto.UnmarshalOptions{Resolver: optionsUnresolved, Merge: true}
	var scratch cataloguev1.Catalogue
	for _, r := range records {
		if err := opts.Unmarshal(r, &scratch); err != nil {
			return err
		}
		clear(scratch.FieldDocs)
	}
	return nil
}
