package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/diff"
	"github.com/garm-dev/garm/catalogue-builder/internal/inspect"
	"github.com/garm-dev/garm/catalogue-builder/internal/publish"
	"github.com/garm-dev/garm/catalogue-builder/signature"
)

func runInspect(_ context.Context, e *env, args []string) int {
	fs := e.flags("inspect")
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	keysPath := fs.String("catalogue-keys", "", "verify the signatures beside the artifact against this catalogue key set `file` (JWKS)")
	pos, code := e.parse(fs, args, 1)
	if code >= 0 {
		return code
	}
	a, err := artifact.ReadFile(pos[0])
	if err != nil {
		return e.refuse("inspect", err)
	}
	keys, err := readKeySet(*keysPath)
	if err != nil {
		return e.refuse("inspect", err)
	}
	view := inspect.Describe(a)
	if view.Signatures, err = describeSignatures(pos[0], a.Digest, keys); err != nil {
		return e.refuse("inspect", err)
	}
	if *asJSON {
		err = inspect.WriteJSON(e.stdout, view)
	} else {
		err = inspect.WriteText(e.stdout, view)
	}
	if err != nil {
		return e.refuse("inspect", err)
	}
	return ExitOK
}

func runDiff(_ context.Context, e *env, args []string) int {
	fs := e.flags("diff")
	failOnWidening := fs.Bool("fail-on-widening", false, "exit 1 when any change widens access")
	keysPath := fs.String("catalogue-keys", "", "verify both artifacts' signatures against this catalogue key set `file` (JWKS), naming signers with their groups")
	pos, code := e.parse(fs, args, 2)
	if code >= 0 {
		return code
	}
	old, err := artifact.ReadFile(pos[0])
	if err != nil {
		return e.refuse("diff", err)
	}
	updated, err := artifact.ReadFile(pos[1])
	if err != nil {
		return e.refuse("diff", err)
	}
	keys, err := readKeySet(*keysPath)
	if err != nil {
		return e.refuse("diff", err)
	}
	oldSigs, err := describeSignatures(pos[0], old.Digest, keys)
	if err != nil {
		return e.refuse("diff", err)
	}
	newSigs, err := describeSignatures(pos[1], updated.Digest, keys)
	if err != nil {
		return e.refuse("diff", err)
	}
	changes := diff.Compare(old, updated)
	if err := diff.Write(e.stdout, changes); err != nil {
		return e.refuse("diff", err)
	}
	if len(changes) == 0 {
		fmt.Fprintf(e.stderr, "no policy difference between %s and %s\n", old.Digest, updated.Digest)
	}
	if oldSigs != nil || newSigs != nil {
		if err := inspect.WriteSignatureDiff(e.stdout, oldSigs, newSigs); err != nil {
			return e.refuse("diff", err)
		}
	}
	if *failOnWidening && diff.HasWidening(changes) {
		return e.refuse("diff", fmt.Errorf("refused: the new catalogue widens access (--fail-on-widening)"))
	}
	return ExitOK
}

// readKeySet is the catalogue key set at path, or nil when path is empty.
func readKeySet(path string) (*signature.KeySet, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	keys, err := signature.ParseKeySet(data)
	if err != nil {
		return nil, fmt.Errorf("--catalogue-keys %s: %w", path, err)
	}
	return keys, nil
}

// describeSignatures is what the envelope beside the artifact at path
// states, or nil when there is none. A malformed envelope is refused.
func describeSignatures(path, digest string, keys *signature.KeySet) (*inspect.Signatures, error) {
	envPath := signature.EnvelopeLocation(path)
	data, err := os.ReadFile(envPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	env, err := signature.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envPath, err)
	}
	return inspect.DescribeSignatures(env, digest, keys), nil
}

func runPublish(ctx context.Context, e *env, args []string) int {
	fs := e.flags("publish")
	unsigned := fs.Bool("unsigned", false, "publish the artifact alone even when an envelope is beside it")
	envPath := fs.String("envelope", "", "the envelope `file` to publish with the artifact (default: the artifact's path with "+signature.EnvelopeSuffix+", when it exists)")
	pos, code := e.parse(fs, args, 2)
	if code >= 0 {
		return code
	}
	if *unsigned && *envPath != "" {
		fmt.Fprintf(e.stderr, "%s publish: --unsigned and --envelope exclude each other\n", e.prog)
		return ExitUsage
	}
	target, err := publish.ParseURL(pos[1])
	if err != nil {
		fmt.Fprintf(e.stderr, "%s publish: %v\n", e.prog, err)
		return ExitUsage
	}
	// Only a catalogue that reads back whole is uploaded: garmd would
	// refuse anything else, after it had replaced the good one in the store.
	data, a, err := artifact.ReadFileBytes(pos[0])
	if err != nil {
		return e.refuse("publish", fmt.Errorf("%w; nothing uploaded", err))
	}
	envelope, err := envelopeToPublish(pos[0], *envPath, *unsigned, a.Digest)
	if err != nil {
		return e.refuse("publish", fmt.Errorf("%w; nothing uploaded", err))
	}
	if envelope == nil {
		res, err := publish.Publish(ctx, data, target)
		if err != nil {
			return e.refuse("publish", err)
		}
		e.published(res)
		fmt.Fprintln(e.stderr, "note: published without signatures; a garmd with --catalogue-keys refuses it")
		return ExitOK
	}
	res, envRes, err := publish.PublishSigned(ctx, data, envelope, target)
	if err != nil {
		return e.refuse("publish", err)
	}
	e.published(res)
	fmt.Fprintf(e.stdout, "published s3://%s/%s (%d bytes), its signatures\n", envRes.Bucket, envRes.Key, envRes.Size)
	return ExitOK
}

func (e *env) published(res publish.Result) {
	fmt.Fprintf(e.stdout, "published s3://%s/%s (%d bytes)\n", res.Bucket, res.Key, res.Size)
	fmt.Fprintln(e.stdout, res.Digest)
	fmt.Fprintf(e.stdout, "etag %s\n", res.ETag)
}

// envelopeToPublish is the envelope to upload with the artifact, or nil to
// upload it alone (--unsigned, or no envelope beside it and none named).
// An envelope that is malformed or signs another artifact is refused
// before anything is uploaded: it would make every verifying garmd refuse
// the pair.
func envelopeToPublish(artifactPath, envPath string, unsigned bool, digest string) ([]byte, error) {
	if unsigned {
		return nil, nil
	}
	named := envPath != ""
	if !named {
		envPath = signature.EnvelopeLocation(artifactPath)
	}
	data, err := os.ReadFile(envPath)
	if errors.Is(err, fs.ErrNotExist) && !named {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	env, err := signature.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envPath, err)
	}
	if env.Statement.Digest != digest {
		return nil, fmt.Errorf("%s signs %s, not this artifact (%s)", envPath, env.Statement.Digest, digest)
	}
	return data, nil
}
