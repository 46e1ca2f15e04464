package logsink_test

import (
	"log/slog"
	"os"

	"github.com/garm-dev/garm/daemon/internal/ledger/logsink"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
)

func ExampleLogRow() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	_ = logsink.LogRow(logger, &ledgerv1.Event{
		EventId: "01J9ZQ4V7K8M2N3P4Q5R6S7T8V",
		Tenant:  "acme",
		App:     "garmd",
		Outcome: "denied",
		Tool:    "/calc.v1.Calculator/Add",
	})
	// Output:
	// {"level":"INFO","msg":"garm.ledger","event_id":"01J9ZQ4V7K8M2N3P4Q5R6S7T8V","time":"","tenant":"acme","app":"garmd","feature":"","run_id":"","correlation_id":"","causation_id":"","budget_id":"","tags":{},"latency_ms":0,"outcome":"denied","error_kind":"","tool":"/calc.v1.Calculator/Add","principal_subject":"","principal_actor":"","principal_kind":"","chain_depth":0,"clearance_effective":"","compartments_effective":[],"redaction_plan":"","redaction_count":0,"disclosed_count":0,"error_detail":"","execution_subject":"","catalogue_digest":"","daemon_version":"","method":"","surface":"","client_name":"","instance_rule":"","rows_filtered":0,"filters_applied":[],"audit_only_verdicts":[],"rule_error_class":"","limit_id":"","limit_key":""}
}
