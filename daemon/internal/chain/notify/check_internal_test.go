package notify

import "testing"

func TestNotifySubjectsAreATenantThenAnyFQN(t *testing.T) {
	if notifySubjects != "garm.v1.notify.*.>" {
		t.Errorf("notifySubjects = %q", notifySubjects)
	}
}
