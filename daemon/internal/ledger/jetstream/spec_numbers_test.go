package jetstream_test

import (
	"testing"
	"time"

	ledgerjs "github.com/garm-dev/garm/daemon/internal/ledger/jetstream"
)

// design 7.10's batch limits, written as the specification writes them: a
// test that read them from the package it checks could not notice the
// package drifting from the specification.
const (
	specFlushInterval = 200 * time.Millisecond
	specBatchRows     = 256
	specBatchBytes    = 512 << 10
)

// The flush interval is time, which no test here waits for; its default is
// pinned to the specification's number directly. The row and byte limits
// are pinned by what the batching tests see on the stream.
func TestTheDefaultFlushIntervalIsTheSpecs(t *testing.T) {
	if ledgerjs.DefaultFlushInterval != specFlushInterval {
		t.Errorf("DefaultFlushInterval is %v; design 7.10 says %v", ledgerjs.DefaultFlushInterval, specFlushInterval)
	}
}
