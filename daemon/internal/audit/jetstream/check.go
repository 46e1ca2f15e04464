package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/garm-dev/garm/daemon/internal/streamcheck"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// CheckStream says what keeps GARM_AUDIT from holding every audit row for at
// least asserted, the retention the operator asserts with
// --audit-stream-retention (zero: indefinitely). It must exist, cover every
// audit subject, be file-backed, refuse new messages rather than drop old
// ones when full (per subject too), keep messages under the limits policy,
// acknowledge publishes, not be sealed, and not age messages out before
// asserted. The error names every problem at once and how to fix it; garmd
// creates and changes no stream.
func CheckStream(ctx context.Context, js jetstream.JetStream, asserted time.Duration) error {
	if asserted < 0 {
		return fmt.Errorf("the asserted audit retention (--audit-stream-retention) is %s; it must be a duration, or 0 for indefinitely", asserted)
	}
	cfg, errs := streamcheck.Check(ctx, js, streamcheck.Stream{
		Noun: "audit", Name: wire.AuditStream, Filter: wire.AuditStreamSubjects, Publishes: auditSubjects,
		Create: fmt.Sprintf("create it file-backed, refusing new messages when full, with the subjects %q, keeping messages %s (the asserted audit retention), e.g. nats stream add %s --subjects '%s' --storage file --discard new --max-age %s --defaults",
			wire.AuditStreamSubjects, keeping(asserted), wire.AuditStream, wire.AuditStreamSubjects, duration(asserted)),
		NoAck: "no audit row could be confirmed",
	})
	if cfg == nil {
		return errors.Join(errs...)
	}
	if cfg.Storage != jetstream.FileStorage {
		errs = append(errs, fmt.Errorf("audit stream %s has %s storage, so its rows would not survive a restart; recreate it with --storage file (storage cannot be edited)",
			wire.AuditStream, cfg.Storage))
	}
	if cfg.Discard != jetstream.DiscardNew {
		errs = append(errs, fmt.Errorf("audit stream %s discards old messages when full (%s), which would drop audit rows to make room; make it refuse new ones, e.g. nats stream edit %s --discard new",
			wire.AuditStream, cfg.Discard, wire.AuditStream))
	}
	if cfg.MaxMsgsPerSubject > 0 && !cfg.DiscardNewPerSubject {
		errs = append(errs, fmt.Errorf("audit stream %s keeps at most %d messages per subject (max_msgs_per_subject) and drops the oldest beyond that; remove the limit, or refuse new messages per subject too (discard_new_per_subject)",
			wire.AuditStream, cfg.MaxMsgsPerSubject))
	}
	if cfg.Retention != jetstream.LimitsPolicy {
		errs = append(errs, fmt.Errorf("audit stream %s has the %s retention policy, which removes rows once consumed; recreate it with the limits policy (--retention limits)",
			wire.AuditStream, cfg.Retention))
	}
	if err := checkMaxAge(cfg.MaxAge, asserted); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// checkMaxAge refuses a stream that ages rows out before the asserted
// retention: zero asserts indefinitely, which only a max age of zero keeps.
func checkMaxAge(maxAge, asserted time.Duration) error {
	if maxAge == 0 || (asserted > 0 && maxAge >= asserted) {
		return nil
	}
	return fmt.Errorf("audit stream %s keeps messages for %s (max_age) but the asserted audit retention (--audit-stream-retention) is %s; raise its max age, e.g. nats stream edit %s --max-age %s, or assert no more than %s",
		wire.AuditStream, duration(maxAge), retention(asserted), wire.AuditStream, duration(asserted), duration(maxAge))
}

// keeping is how long a stream must keep messages to honour asserted.
func keeping(asserted time.Duration) string {
	if asserted == 0 {
		return "indefinitely"
	}
	return "for at least " + duration(asserted)
}

// retention is an asserted retention as a sentence says it.
func retention(d time.Duration) string {
	if d == 0 {
		return "0, indefinitely"
	}
	return duration(d)
}

// duration writes d without the zero units time.Duration.String ends with
// ("720h", not "720h0m0s"), in a form both Go and the nats CLI parse.
func duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// auditSubjects is every subject wire.AuditSubject can make: its tenant and
// app tokens are single tokens, so two "*" match them all.
var auditSubjects = func() string {
	tokens := strings.Split(wire.AuditSubject("tenant", "app"), ".")
	tokens[len(tokens)-2], tokens[len(tokens)-1] = "*", "*"
	return strings.Join(tokens, ".")
}()
