package jetstream

import (
	"testing"
	"time"
)

func TestAuditSubjectsAreEveryFiveTokenAuditSubject(t *testing.T) {
	if auditSubjects != "garm.v1.audit.*.*" {
		t.Errorf("auditSubjects = %q", auditSubjects)
	}
}

func TestDurationDropsTrailingZeroUnits(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                              "0s",
		30 * time.Second:               "30s",
		time.Minute:                    "1m",
		90 * time.Second:               "1m30s",
		time.Hour:                      "1h",
		90 * time.Minute:               "1h30m",
		time.Hour + 30*time.Second:     "1h0m30s",
		720 * time.Hour:                "720h",
		1500 * time.Millisecond:        "1.5s",
		500 * time.Millisecond:         "500ms",
		10*time.Minute + 0*time.Second: "10m",
		2*time.Hour + 10*time.Minute:   "2h10m",
	} {
		if got := duration(d); got != want {
			t.Errorf("duration(%v) = %q, want %q", d, got, want)
		}
		if parsed, err := time.ParseDuration(duration(d)); err != nil || parsed != d {
			t.Errorf("duration(%v) = %q parses back as %v, %v", d, duration(d), parsed, err)
		}
	}
}

func TestCheckMaxAge(t *testing.T) {
	const day = 24 * time.Hour
	for _, tc := range []struct {
		maxAge, asserted time.Duration
		ok               bool
	}{
		{0, 0, true},
		{0, 30 * day, true},
		{30 * day, 30 * day, true},
		{31 * day, 30 * day, true},
		{29 * day, 30 * day, false},
		{365 * day, 0, false},
		{time.Nanosecond, 0, false},
	} {
		if err := checkMaxAge(tc.maxAge, tc.asserted); (err == nil) != tc.ok {
			t.Errorf("checkMaxAge(%v, %v) = %v, want ok %v", tc.maxAge, tc.asserted, err, tc.ok)
		}
	}
}
