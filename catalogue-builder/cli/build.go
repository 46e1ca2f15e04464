package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/build"
	"github.com/garm-dev/garm/catalogue-builder/internal/manifest"
	"github.com/garm-dev/garm/catalogue-builder/internal/sources"
	"github.com/garm-dev/garm/internal/atomicfile"
)

// buildFlags are the flags build and lint share.
type buildFlags struct {
	manifest, image, source string
	stamp                   bool
	// manifestName is the loaded manifest's name, the default --name of
	// a signed build.
	manifestName string
	sign         signFlags
}

func (e *env) buildFlagSet(name string, withOutput bool) (*flagSetWith, *buildFlags) {
	fs := e.flags(name)
	bf := &buildFlags{}
	fs.StringVar(&bf.manifest, "f", "catalogue.yaml", "the manifest `file` naming the proto include roots")
	fs.StringVar(&bf.image, "image", "", "read a buf image or FileDescriptorSet `file` (with its imports) instead of sources; excludes -f")
	fs.StringVar(&bf.source, "source", "", "provenance `text` naming the sources of an --image build")
	out := &flagSetWith{FlagSet: fs}
	if withOutput {
		fs.StringVar(&out.output, "o", "catalogue.binpb", "the `file` to write the artifact to")
		fs.BoolVar(&bf.stamp, "stamp", false, "record the build time (the artifact then differs on every build)")
		fs.StringVar(&bf.sign.key, "sign-key", "", "sign the artifact with this private key `file` (see sign), writing the envelope beside it")
		fs.Uint64Var(&bf.sign.version, "version", 0, "with --sign-key: the catalogue's version `number`")
		fs.StringVar(&bf.sign.name, "name", "", "with --sign-key: the catalogue's `name` (default: the manifest's name)")
	}
	return out, bf
}

func runBuild(ctx context.Context, e *env, args []string) int {
	fs, bf := e.buildFlagSet("build", true)
	if _, code := e.parse(fs.FlagSet, args, 0); code >= 0 {
		return code
	}
	switch {
	case bf.sign.key == "" && (fs.isSet("version") || fs.isSet("name")):
		fmt.Fprintf(e.stderr, "%s build: --version and --name are for a signed build (--sign-key)\n", e.prog)
		return ExitUsage
	case bf.sign.key != "" && bf.sign.version == 0:
		fmt.Fprintf(e.stderr, "%s build: --sign-key needs --version\n", e.prog)
		return ExitUsage
	}
	res, code := e.build(ctx, fs, bf)
	if res == nil {
		return code
	}
	if err := atomicfile.Write(fs.output, res.Bytes, 0o644); err != nil {
		return e.refuse("build", fmt.Errorf("%w; no artifact written", err))
	}
	fmt.Fprintf(e.stdout, "wrote %s\n", fs.output)
	e.summary(res.Artifact)
	fmt.Fprintln(e.stdout, res.Artifact.Digest)
	var fqns []string
	for _, t := range res.Artifact.Tools() {
		fqns = append(fqns, t.FQN)
	}
	slices.Sort(fqns)
	for _, fqn := range fqns {
		fmt.Fprintln(e.stdout, fqn)
	}
	if bf.sign.key == "" {
		e.noteStaleEnvelope(fs.output, res.Artifact.Digest)
		return ExitOK
	}
	if bf.sign.name == "" {
		bf.sign.name = bf.manifestName
	}
	return e.sign(&bf.sign, fs.output, res.Artifact.Digest, "build", true)
}

func runLint(ctx context.Context, e *env, args []string) int {
	fs, bf := e.buildFlagSet("lint", false)
	if _, code := e.parse(fs.FlagSet, args, 0); code >= 0 {
		return code
	}
	res, code := e.build(ctx, fs, bf)
	if res == nil {
		return code
	}
	fmt.Fprint(e.stdout, "ok: ")
	e.summary(res.Artifact)
	return ExitOK
}

// build runs the pipeline for build and lint, printing warnings and any
// refusal; a nil result comes with the exit code to stop with.
func (e *env) build(ctx context.Context, fs *flagSetWith, bf *buildFlags) (*build.Result, int) {
	name := fs.Name()
	in := build.Input{Producer: Producer()}
	if bf.stamp {
		in.BuiltAt = time.Now()
	}
	switch {
	case bf.image != "" && fs.isSet("f"):
		fmt.Fprintf(e.stderr, "%s %s: --image and -f exclude each other\n", e.prog, name)
		return nil, ExitUsage
	case bf.image == "" && fs.isSet("source"):
		fmt.Fprintf(e.stderr, "%s %s: --source is for --image builds; a manifest names its source itself\n", e.prog, name)
		return nil, ExitUsage
	case bf.image != "":
		data, err := os.ReadFile(bf.image)
		if err != nil {
			return nil, e.refuse(name, err)
		}
		in.Image, in.Source = data, bf.source
	default:
		m, err := manifest.Load(bf.manifest)
		if err != nil {
			return nil, e.refuse(name, fmt.Errorf("%w\nrefused: the manifest has problems; no artifact written", err))
		}
		in.Manifest = m
		bf.manifestName = m.Name
	}
	res, err := build.Run(ctx, in)
	var refused *build.Refused
	var problems sources.Problems
	var manifestProblems manifest.Problems
	switch {
	case errors.As(err, &refused):
		fmt.Fprint(e.stderr, refused.Diagnostics.String())
		return nil, e.refuse(name, fmt.Errorf("refused: %d lint error(s), printed above; no artifact written", refused.Diagnostics.Errors()))
	case errors.As(err, &problems):
		for _, p := range problems {
			fmt.Fprintln(e.stderr, p)
		}
		return nil, e.refuse(name, fmt.Errorf("refused: %d problem(s) reading the sources, printed above; no artifact written", len(problems)))
	case errors.As(err, &manifestProblems):
		for _, p := range manifestProblems {
			fmt.Fprintln(e.stderr, p)
		}
		return nil, e.refuse(name, fmt.Errorf("refused: %d problem(s) with the manifest's limits, printed above; no artifact written", len(manifestProblems)))
	case err != nil:
		return nil, e.refuse(name, fmt.Errorf("%w; no artifact written", err))
	}
	fmt.Fprint(e.stderr, res.Warnings.String())
	return res, ExitOK
}

// summary prints the line describing a built artifact.
func (e *env) summary(a *artifact.Artifact) {
	tools, packages := 0, 0
	for _, pkg := range a.Model.Packages {
		if len(pkg.Tools) > 0 {
			packages++
			tools += len(pkg.Tools)
		}
	}
	c := a.Catalogue
	fmt.Fprintf(e.stdout, "%s, %s, %s, %s, annotation schema version %d\n",
		plural(tools, "tool"), plural(packages, "package"), plural(len(c.GetFiles().GetFile()), "file"),
		plural(len(c.GetFieldDocs()), "documented field"), c.GetAnnotationSchemaVersion())
}

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
