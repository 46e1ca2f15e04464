package artifact

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Artifact is a catalogue read back and checked.
type Artifact struct {
	// Digest is "sha256:" and the hex SHA-256 of the bytes read.
	Digest string
	// Size is the number of bytes read.
	Size      int
	Catalogue *cataloguev1.Catalogue
	// Files resolves the catalogue's descriptors; it was built from the
	// artifact alone.
	Files *protoregistry.Files
	// Model is the tool model read from the artifact's descriptors.
	Model *compile.Model
	// Built is what this read built and checked, keyed for a later reload
	// to reuse (ReloadToServe); nil from Read.
	Built *Built
	// Reused counts the files whose descriptors ReloadToServe took from
	// the generation serving instead of building them, and ReusedPlans
	// the package plans it took instead of decoding them.
	Reused, ReusedPlans int
	// FromChecked counts the files ReadCheckedToServe built from their
	// bytes because their keys were checked before (Checked).
	FromChecked int
	plans       map[planKey]*planv1.MessagePlan
}

// planKey names a message plan: a message used by tools of two packages has
// a plan in each.
type planKey struct{ pkg, message string }

// Plan is the plan a package holds for a message, or nil.
func (a *Artifact) Plan(pkg, message string) *planv1.MessagePlan {
	return a.plans[planKey{pkg, message}]
}

// Tools lists every tool of the artifact, packages in name order, tools in
// declaration order.
func (a *Artifact) Tools() []*compile.Tool {
	packages := slices.Clone(a.Model.Packages)
	slices.SortFunc(packages, func(x, y *compile.Package) int { return cmp.Compare(x.Name, y.Name) })
	var tools []*compile.Tool
	for _, pkg := range packages {
		tools = append(tools, pkg.Tools...)
	}
	return tools
}

// VersionError refuses an artifact written for an annotation schema version
// newer than this build reads. garmd and garm-catalogue share this reader;
// each names itself when it gives the advice.
type VersionError struct{ Version uint32 }

func (e *VersionError) Error() string {
	return fmt.Sprintf("written for annotation schema version %d; this build reads %d: upgrade this program before adopting it", e.Version, SchemaVersion)
}

// ReadFile reads and checks the artifact at path.
func ReadFile(path string) (*Artifact, error) {
	_, a, err := ReadFileBytes(path)
	return a, err
}

// ReadFileBytes reads and checks the artifact at path and returns its bytes
// too (see ReadFileData).
func ReadFileBytes(path string) ([]byte, *Artifact, error) {
	data, err := ReadFileData(path)
	if err != nil {
		return nil, nil, err
	}
	a, err := Read(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, a, nil
}

// ReadFileData reads the bytes of the artifact file at path without checking
// them, refusing a file larger than MaxSize before reading it (and one that
// grows past it while it is read). The buffer is sized from the file, so a
// large artifact is not copied while it grows.
func ReadFileData(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if info.Size() > MaxSize {
		return nil, fmt.Errorf("%s: it is %d bytes, larger than the %d MiB ceiling", path, info.Size(), MaxSize>>20)
	}
	buf := bytes.NewBuffer(make([]byte, 0, info.Size()+1))
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxSize+1)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if buf.Len() > MaxSize {
		return nil, fmt.Errorf("%s: it grew past the %d MiB ceiling while it was read", path, MaxSize>>20)
	}
	return buf.Bytes(), nil
}

// Read checks an artifact's bytes and returns what they hold. See the
// package documentation for what it refuses.
func Read(data []byte) (*Artifact, error) { return read(data, false, nil, nil) }

// ReadToServe is Read for a reader that serves the catalogue rather than
// inspects it: it accepts and refuses exactly what Read does, and returns
// the same artifact less its descriptor set and field docs
// (Catalogue.Files and Catalogue.FieldDocs are nil). Each file of the set
// is decoded when its descriptors are built and dropped then, and the
// field docs are decoded one record at a time and not kept, so a load
// never holds the descriptor protos beside the descriptors.
func ReadToServe(data []byte) (*Artifact, error) { return read(data, true, nil, nil) }

// ReloadToServe is ReadToServe for a reload: a descriptor file whose bytes
// have the same SHA-256 as a file serving was built from, and whose imports
// are reused the same way (Built), is not decoded or built again; serving's
// descriptors of it are taken instead. serving must be the Built of the
// artifact this process is serving — accepted, checked and mounted — and
// nothing else: it is the only cache, so a refused candidate contributes
// nothing. Every other check runs on the whole artifact as ReadToServe runs
// it, and what it accepts and refuses, and the artifact it returns, are
// ReadToServe's. A nil serving reuses nothing.
func ReloadToServe(data []byte, serving *Built) (*Artifact, error) {
	return read(data, true, serving, nil)
}

// ReadCheckedToServe is ReloadToServe given, besides, the keys of files a
// process of this executable built and checked before (Checked, from a
// check cache): a file whose key checked holds and serving does not is
// built from its bytes without being decoded or checked again. Every other
// check runs as ReadToServe runs it, and a file whose bytes or imports
// differ in any byte has another key and is checked as ReadToServe checks
// it. Only the caller can vouch for checked: this package takes its keys
// as proof. A nil checked is ReloadToServe.
func ReadCheckedToServe(data []byte, serving *Built, checked *Checked) (*Artifact, error) {
	return read(data, true, serving, checked)
}

func read(data []byte, serve bool, serving *Built, checked *Checked) (*Artifact, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("not a catalogue: larger than %d MiB", MaxSize>>20)
	}
	a := &Artifact{Size: len(data), Catalogue: new(cataloguev1.Catalogue)}
	digested := make(chan string, 1)
	go func() { digested <- Digest(data) }()
	var files []encodedFile
	var plans *readPlans
	var err error
	if serve {
		files, plans, err = splitCatalogue(data, a.Catalogue, serving)
		if err == nil && files == nil && a.Catalogue.Files != nil {
			// Decoded whole, by proto, after all.
			files = decodedFiles(a.Catalogue.Files)
		}
		a.Catalogue.Files, a.Catalogue.FieldDocs = nil, nil
	} else {
		err = unmarshalCatalogue(data, a.Catalogue)
		files = decodedFiles(a.Catalogue.GetFiles())
	}
	a.Digest = <-digested
	if err != nil {
		return nil, fmt.Errorf("not a catalogue: %w", err)
	}
	c := a.Catalogue
	switch v := c.GetAnnotationSchemaVersion(); {
	case v == 0:
		return nil, errors.New("not a catalogue: it names no annotation schema version")
	case v > SchemaVersion:
		return nil, &VersionError{Version: v}
	}
	if len(files) == 0 {
		return nil, errors.New("not a catalogue: it holds no descriptors")
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.name
	}
	registry, built, counted, err := buildFiles(files, serving, checked)
	if malformed := (*malformedError)(nil); errors.As(err, &malformed) {
		return nil, fmt.Errorf("not a catalogue: %w", malformed.err)
	}
	if err != nil {
		return nil, fmt.Errorf("its descriptors do not resolve on their own: %w", err)
	}
	a.Files = registry
	descs := make([]protoreflect.FileDescriptor, 0, len(names))
	for _, name := range names {
		fd, err := registry.FindFileByPath(name)
		if err != nil {
			return nil, err
		}
		descs = append(descs, fd)
	}
	if a.Model, err = compile.BuildReusing(descs, serving.previousModel()); err != nil {
		return nil, err
	}
	var taken map[*planv1.PackagePlan]bool
	if plans != nil {
		taken = plans.taken()
	}
	if err := a.checkPlans(serving, taken); err != nil {
		return nil, err
	}
	if err := a.checkTaxonomy(); err != nil {
		return nil, err
	}
	if err := a.checkLimits(); err != nil {
		return nil, err
	}
	if serve {
		// Only an artifact accepted whole is kept for a reload to reuse.
		if plans != nil {
			built.plans = make(map[digestKey]*planv1.PackagePlan, len(plans.keys))
			for i, key := range plans.keys {
				built.plans[key] = plans.plans[i]
			}
			a.ReusedPlans = plans.reused
			built.docs, built.docsChecked = plans.docs, true
		}
		built.model = a.Model
		a.Built, a.Reused, a.FromChecked = built, counted.reused, counted.fromChecked
	}
	return a, nil
}

// checkTaxonomy verifies that the taxonomy is well formed and that every
// compartment and tool set a tool or a plan uses is declared in it: a name
// nothing declares could never be granted, so it is a broken artifact, not
// a policy.
func (a *Artifact) checkTaxonomy() error {
	c := a.Catalogue
	compartments, sets := map[string]bool{}, map[string]bool{}
	for _, d := range c.GetCompartments() {
		if d.GetName() == "" || compartments[d.GetName()] {
			return fmt.Errorf("the taxonomy declares compartment %q twice or without a name", d.GetName())
		}
		compartments[d.GetName()] = true
	}
	if len(compartments) > compile.MaxCompartments {
		return fmt.Errorf("the taxonomy declares %d compartments; at most %d", len(compartments), compile.MaxCompartments)
	}
	for _, d := range c.GetToolSets() {
		if d.GetName() == "" || sets[d.GetName()] {
			return fmt.Errorf("the taxonomy declares tool set %q twice or without a name", d.GetName())
		}
		sets[d.GetName()] = true
	}
	attributes := map[string]bool{}
	for _, d := range c.GetAttributes() {
		if attributes[d.GetName()] {
			return fmt.Errorf("the taxonomy declares attribute %q twice", d.GetName())
		}
		if problem := compile.AttributeProblem(d); problem != "" {
			return fmt.Errorf("the taxonomy's attribute %q: %s", d.GetName(), problem)
		}
		attributes[d.GetName()] = true
	}
	undeclared := func(declared map[string]bool, names ...[]string) string {
		for _, list := range names {
			for _, n := range list {
				if !declared[n] {
					return n
				}
			}
		}
		return ""
	}
	for _, t := range a.Tools() {
		p := t.Policy
		if n := undeclared(compartments, p.GetCompartments(), p.GetApproval().GetApproverCompartments()); n != "" {
			return fmt.Errorf("tool %s uses compartment %q, which the taxonomy does not declare", t.FQN, n)
		}
		if n := undeclared(sets, p.GetSets()); n != "" {
			return fmt.Errorf("tool %s is in tool set %q, which the taxonomy does not declare", t.FQN, n)
		}
	}
	for key, mp := range a.plans {
		for _, r := range mp.GetRules() {
			if n := undeclared(compartments, r.GetCompartments()); n != "" {
				return fmt.Errorf("package %s: %s field %s uses compartment %q, which the taxonomy does not declare", key.pkg, key.message, r.GetPath(), n)
			}
		}
	}
	return nil
}

// checkPlans verifies that every tool-bearing package has its recorded
// descriptor hash and a plan for every tool input and output that describes
// the message field for field, and that nothing else is recorded. A plan
// of a package plan taken from serving (taken) is not checked against
// descriptors serving checked it against (Built.checkedBefore).
func (a *Artifact) checkPlans(serving *Built, taken map[*planv1.PackagePlan]bool) error {
	c := a.Catalogue
	messages := 0
	for _, pp := range c.GetPlans() {
		messages += len(pp.GetMessages())
	}
	a.plans = make(map[planKey]*planv1.MessagePlan, messages)
	planned := make(map[string]bool, len(c.GetPlans()))
	var fromServing map[*planv1.MessagePlan]bool
	for _, pp := range c.GetPlans() {
		if planned[pp.GetPackage()] {
			return fmt.Errorf("plans for package %s appear twice", pp.GetPackage())
		}
		planned[pp.GetPackage()] = true
		for _, mp := range pp.GetMessages() {
			key := planKey{pp.GetPackage(), mp.GetMessage()}
			if a.plans[key] != nil {
				return fmt.Errorf("package %s: the plan for %s appears twice", pp.GetPackage(), mp.GetMessage())
			}
			a.plans[key] = mp
			if taken[pp] {
				if fromServing == nil {
					fromServing = make(map[*planv1.MessagePlan]bool, messages)
				}
				fromServing[mp] = true
			}
		}
	}
	// The checks run in the order below and the first refusal is returned;
	// the plan-against-descriptor checks, most of the work, are queued in
	// that order and run beside each other.
	type planCheck struct {
		tool *compile.Tool
		md   protoreflect.MessageDescriptor
		mp   *planv1.MessagePlan
		err  error // a refusal found before the plan could be checked
	}
	checks := make([]planCheck, 0, messages)
	tools, withTools, used := 0, make(map[string]bool, len(planned)), make(map[planKey]bool, messages)
queue:
	for _, pkg := range a.Model.Packages {
		if len(pkg.Tools) == 0 {
			continue
		}
		name := string(pkg.Name)
		withTools[name] = true
		tools += len(pkg.Tools)
		if got := c.GetDescriptorHashes()[name]; got != pkg.DescriptorHash {
			checks = append(checks, planCheck{err: fmt.Errorf("package %s: recorded descriptor hash %q, its descriptors hash to %q", name, got, pkg.DescriptorHash)})
			break
		}
		if !planned[name] {
			checks = append(checks, planCheck{err: fmt.Errorf("package %s has tools and no plans", name)})
			break
		}
		for _, t := range pkg.Tools {
			for _, md := range []protoreflect.MessageDescriptor{t.Desc.Input(), t.Desc.Output()} {
				key := planKey{name, string(md.FullName())}
				used[key] = true
				mp := a.plans[key]
				if mp == nil {
					checks = append(checks, planCheck{err: fmt.Errorf("tool %s: no plan for %s", t.FQN, md.FullName())})
					break queue
				}
				checks = append(checks, planCheck{tool: t, md: md, mp: mp})
			}
		}
	}
	err := forEach(len(checks), func(i int) error {
		ch := checks[i]
		if ch.err != nil {
			return ch.err
		}
		if fromServing[ch.mp] && serving.checkedBefore(ch.md) {
			return nil
		}
		if err := compile.CheckPlan(ch.md, ch.mp); err != nil {
			return fmt.Errorf("tool %s: %w", ch.tool.FQN, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if tools == 0 {
		return errors.New("the catalogue declares no tool")
	}
	for name := range c.GetDescriptorHashes() {
		if !withTools[name] {
			return fmt.Errorf("a descriptor hash is recorded for %s, which has no tool", name)
		}
	}
	for name := range planned {
		if !withTools[name] {
			return fmt.Errorf("plans are recorded for %s, which has no tool", name)
		}
	}
	for key := range a.plans {
		if !used[key] {
			return fmt.Errorf("package %s: the plan for %s belongs to no tool", key.pkg, key.message)
		}
	}
	return nil
}
