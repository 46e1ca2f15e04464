package garmtooltest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/garm-dev/garm/runtime/toolbind"
)

// CallTimeout bounds a test's calls made with Context.
const CallTimeout = 10 * time.Second

// Context is the test's context bounded by CallTimeout, cancelled when the
// test ends: every call a test makes stops by itself.
func Context(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), CallTimeout)
	t.Cleanup(cancel)
	return ctx
}

// WantRefusal fails the test unless err is the tool's refusal with code
// (one of toolbind's refusal codes, e.g. toolbind.CodeNotFound), as garmd
// would pass it to its caller.
func WantRefusal(t testing.TB, err error, code string) {
	t.Helper()
	var coded *toolbind.CodedError
	if !errors.As(err, &coded) || coded.Code != code {
		t.Fatalf("answered %v, want a %s refusal", err, code)
	}
}
