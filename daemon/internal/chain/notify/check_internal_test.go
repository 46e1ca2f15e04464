package notify

import "testing"

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		filter, subjects string
		want             bool
	}{
		{"garm.v1.notify.>", "garm.v1.notify.*.>", true},
		{"garm.v1.notify.*.>", "garm.v1.notify.*.>", true},
		{">", "garm.v1.notify.*.>", true},
		{"garm.>", "garm.v1.notify.*.>", true},
		{"*.v1.notify.>", "garm.v1.notify.*.>", true},
		{"garm.v1.notify.*.*.>", "garm.v1.notify.*.>", false},
		{"garm.v1.notify.*.*", "garm.v1.notify.*.>", false},
		{"garm.v1.notify.acme.>", "garm.v1.notify.*.>", false},
		{"garm.v1.notify.*", "garm.v1.notify.*.>", false},
		{"garm.v1.audit.>", "garm.v1.notify.*.>", false},
	} {
		if got := covers(tc.filter, tc.subjects); got != tc.want {
			t.Errorf("covers(%q, %q) = %v, want %v", tc.filter, tc.subjects, got, tc.want)
		}
	}
}

func TestNotifySubjectsAreATenantThenAnyFQN(t *testing.T) {
	if notifySubjects != "garm.v1.notify.*.>" {
		t.Errorf("notifySubjects = %q", notifySubjects)
	}
}
