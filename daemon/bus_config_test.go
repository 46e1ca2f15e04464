package garmd_test

import (
	"path/filepath"
	"strings"
	"testing"

	garmd "github.com/garm-dev/garm/daemon"
)

func TestABusURLCarryingAPasswordIsRefusedPointingAtTheUserFile(t *testing.T) {
	t.Parallel()
	cfg := garmd.DefaultConfig()
	cfg.NATS = "nats://garmd:s3cret@127.0.0.1:4222"
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "--nats-user-file") {
		t.Fatalf("Validate = %v, want a refusal naming --nats-user-file", err)
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("the refusal echoes the password: %v", err)
	}
}

func TestBusAndListenerFlagsThatDoNotGoTogetherAreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seed := filepath.Join(dir, "garmd.nk")
	writeFile(t, seed, []byte("SUAB\n"))
	users := filepath.Join(dir, "garmd.user")
	writeFile(t, users, []byte("garmd\n"))
	cfg := garmd.DefaultConfig()
	cfg.NATSNKey = seed
	cfg.NATSUserFile = users
	cfg.NATSTLSCert = filepath.Join(dir, "cert.pem")
	cfg.TLSKey = filepath.Join(dir, "key.pem")
	cfg.TLSClientCA = filepath.Join(dir, "ca.pem")
	err := cfg.Validate()
	if err == nil {
		t.Fatal("Validate accepted them")
	}
	for _, want := range []string{
		"--nats-nkey and --nats-user-file are given together",
		"holds 1 non-empty lines; it holds two: the user, then the password",
		"--nats-tls-cert: stat",
		"--nats-tls-cert and --nats-tls-key go together",
		"--tls-cert and --tls-key go together",
		"--tls-client-ca needs --tls-cert",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the problems do not mention %q:\n%v", want, err)
		}
	}
}

func TestGarmdWarnsThatABusAskingNoCredentialsLetsAnyoneWriteTheSpentGrants(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	log := s.logs.String()
	for _, want := range []string{`"level":"WARN","msg":"garmd: who may write spent grants"`, "the bus asks no credentials", `"auth":"no credentials"`, `"tls":"off`} {
		if !strings.Contains(log, want) {
			t.Errorf("the startup report does not say %s:\n%s", want, log)
		}
	}
}
