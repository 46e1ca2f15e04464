package cli

import (
	"context"
	"fmt"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/diff"
	"github.com/garm-dev/garm/catalogue-builder/internal/inspect"
	"github.com/garm-dev/garm/catalogue-builder/internal/publish"
)

func runInspect(_ context.Context, e *env, args []string) int {
	fs := e.flags("inspect")
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	pos, code := e.parse(fs, args, 1)
	if code >= 0 {
		return code
	}
	a, err := artifact.ReadFile(pos[0])
	if err != nil {
		return e.refuse("inspect", err)
	}
	view := inspect.Describe(a)
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
	changes := diff.Compare(old, updated)
	if err := diff.Write(e.stdout, changes); err != nil {
		return e.refuse("diff", err)
	}
	if len(changes) == 0 {
		fmt.Fprintf(e.stderr, "no policy difference between %s and %s\n", old.Digest, updated.Digest)
	}
	if *failOnWidening && diff.HasWidening(changes) {
		return e.refuse("diff", fmt.Errorf("refused: the new catalogue widens access (--fail-on-widening)"))
	}
	return ExitOK
}

func runPublish(ctx context.Context, e *env, args []string) int {
	fs := e.flags("publish")
	pos, code := e.parse(fs, args, 2)
	if code >= 0 {
		return code
	}
	target, err := publish.ParseURL(pos[1])
	if err != nil {
		fmt.Fprintf(e.stderr, "%s publish: %v\n", e.prog, err)
		return ExitUsage
	}
	// Only a catalogue that reads back whole is uploaded: garmd would
	// refuse anything else, after it had replaced the good one in the store.
	data, _, err := artifact.ReadFileBytes(pos[0])
	if err != nil {
		return e.refuse("publish", fmt.Errorf("%w; nothing uploaded", err))
	}
	res, err := publish.Publish(ctx, data, target)
	if err != nil {
		return e.refuse("publish", err)
	}
	fmt.Fprintf(e.stdout, "published s3://%s/%s (%d bytes)\n", res.Bucket, res.Key, res.Size)
	fmt.Fprintln(e.stdout, res.Digest)
	fmt.Fprintf(e.stdout, "etag %s\n", res.ETag)
	return ExitOK
}
