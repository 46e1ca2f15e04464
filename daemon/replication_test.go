package garmd_test

import (
	"context"
	"strings"
	"testing"

	garmd "github.com/garm-dev/garm/daemon"
)

func TestGarmdRefusesToStartWhenItsStreamsHaveFewerReplicasThanRequired(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t, withApprovals(), withLimits(t))
	cfg := s.cfg
	cfg.Listen, cfg.AdminListen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.MinReplicas = 3
	d, err := garmd.New(context.Background(), cfg)
	if err == nil {
		t.Fatalf("garmd started on R1 streams with --min-replicas 3 (%v)", d.Addr())
	}
	for _, want := range []string{
		"--ledger-stream: ledger stream GARM_LEDGER has 1 replica, fewer than --min-replicas 3",
		"nats stream edit GARM_LEDGER --replicas 3",
		"nats stream edit GARM_AUDIT --replicas 3",
		"nats stream edit GARM_NOTIFY --replicas 3",
		"nats stream edit KV_GARM_GRANTS_SPENT --replicas 3",
		"--approvals: approvals bucket GARM_APPROVALS has 1 replica",
		"nats stream edit KV_GARM_APPROVALS --replicas 3",
		"--limits: limit counter stream GARM_LIMITS_SECOND has 1 replica",
		"nats stream edit GARM_LIMITS_CONCURRENCY --replicas 3",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q:\n%v", want, err)
		}
	}
}

func TestMinReplicasOutsideWhatJetStreamKeepsIsRefused(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, -1, 6} {
		cfg := garmd.DefaultConfig()
		cfg.MinReplicas = n
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "--min-replicas") {
			t.Errorf("--min-replicas %d: Validate = %v, want a refusal naming it", n, err)
		}
	}
	if err := garmd.DefaultConfig().Validate(); err != nil && strings.Contains(err.Error(), "--min-replicas") {
		t.Errorf("the default --min-replicas is refused: %v", err)
	}
}
