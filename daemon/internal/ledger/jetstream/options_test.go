package jetstream_test

import (
	"strings"
	"testing"

	ledgerjs "github.com/garm-dev/garm/daemon/internal/ledger/jetstream"
	"github.com/garm-dev/garm/runtime/garmtooltest"
)

func TestNewNamesEveryOptionItCannotHonour(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	_, js := connect(t, s)
	_, err := ledgerjs.New(js, ledgerjs.Options{FlushInterval: -1, MaxBatchRows: -1, MaxBatchBytes: -1, BufferRows: -1, PublishTimeout: -1})
	if err == nil {
		t.Fatal("New accepted negative options and no logger")
	}
	for _, name := range []string{"Logger", "FlushInterval", "MaxBatchRows", "MaxBatchBytes", "BufferRows", "PublishTimeout"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error does not name %s: %v", name, err)
		}
	}
}

func TestNewRefusesBatchesTheServerCouldNotCarry(t *testing.T) {
	s := garmtooltest.StartJetStream(t, garmtooltest.WithMaxPayload(64<<10))
	_, js := connect(t, s)
	var logs logCapture
	_, err := ledgerjs.New(js, ledgerjs.Options{Logger: logs.logger()})
	if err == nil || !strings.Contains(err.Error(), "MaxBatchBytes") || !strings.Contains(err.Error(), "max_payload") {
		t.Fatalf("New = %v, want a refusal naming MaxBatchBytes and max_payload", err)
	}
	r := newRecorder(t, js, ledgerjs.Options{Logger: logs.logger(), MaxBatchBytes: 32 << 10})
	if r == nil {
		t.Fatal("New refused batches the server can carry")
	}
}
