package keyset

import (
	"testing"
	"time"
)

// design 7.5's key-set numbers, written as the specification writes them: a
// test that read them from the package it checks could not notice the
// package drifting from the specification.
const (
	specMaxBodyBytes       = 1 << 20 // 1 MiB
	specFetchTimeout       = 10 * time.Second
	specTTL                = 10 * time.Minute
	specUnknownKidInterval = time.Minute
)

// The fetch timeout is wall-clock time, which no test here waits for; it is
// pinned to the specification's number directly. The others are pinned by
// the fetch tests, which move a clock by the specification's numbers.
func TestTheFetchTimeoutIsTheSpecs(t *testing.T) {
	if FetchTimeout != specFetchTimeout {
		t.Errorf("FetchTimeout is %v; design 7.5 says %v", FetchTimeout, specFetchTimeout)
	}
}
