package gctarget

import (
	"strings"
	"testing"
)

func TestChoose(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		name    string
		setting string
		env     Environment
		kept    bool
		percent int
		limit   int64
		source  string
	}{
		{"GOGC in the environment wins over auto", Auto, Environment{GOGC: "150", ContainerLimit: gib}, true, 0, 0, "GOGC"},
		{"GOGC in the environment wins over --gogc", "800", Environment{GOGC: "off"}, true, 0, 0, "GOGC"},
		{"an explicit --gogc is taken as it is", "300", Environment{GOMEMLIMIT: "1GiB"}, false, 300, 0, "--gogc"},
		{"--gogc off", "off", Environment{}, false, -1, 0, "--gogc"},
		{"auto under GOMEMLIMIT sets no limit of its own", Auto, Environment{GOMEMLIMIT: "1GiB", ContainerLimit: 2 * gib}, false, Bounded, 0, "auto"},
		{"auto in a container sets a soft limit below it", Auto, Environment{ContainerLimit: 2 * gib}, false, Bounded, 2 * gib * 4 / 5, "auto"},
		{"auto with no limit known stays moderate", Auto, Environment{}, false, Unbounded, 0, "auto"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Choose(tc.setting, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if d.Kept != tc.kept || d.Percent != tc.percent || d.MemoryLimit != tc.limit || d.Source != tc.source || d.Reason == "" {
				t.Errorf("Choose(%q, %+v) = %+v; want percent %d, limit %d, source %s, and a reason", tc.setting, tc.env, d, tc.percent, tc.limit, tc.source)
			}
		})
	}
}

func TestValidateRefusesWhatIsNotATarget(t *testing.T) {
	for _, bad := range []string{"", "AUTO", "-1", "0", "24", "4OO", "1e3"} {
		if err := Validate(bad); err == nil || !strings.Contains(err.Error(), "--gogc") {
			t.Errorf("Validate(%q) = %v, want a refusal naming --gogc", bad, err)
		}
	}
	for _, good := range []string{"auto", "off", "25", "400"} {
		if err := Validate(good); err != nil {
			t.Errorf("Validate(%q) = %v", good, err)
		}
	}
}
