package prometheus

import (
	"encoding/json"
	"os"
	"os/exec"
	"testing"
)

// installPromtool is how a Debian machine gets promtool.
const installPromtool = "apt-get install -y prometheus"

func TestPromtoolAcceptsTheAlertingRules(t *testing.T) {
	t.Parallel()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool is not installed; install it with: %s", installPromtool)
	}
	// Read here too, so that go test's cache knows the result depends on it.
	if _, err := os.ReadFile("garmd-alerts.yaml"); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", "garmd-alerts.yaml").CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}

func TestTheDashboardIsGrafanaJSONWithUniquePanels(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("garmd-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID    string `json:"uid"`
		Title  string `json:"title"`
		Panels []struct {
			ID    int    `json:"id"`
			Title string `json:"title"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	if d.UID == "" || d.Title == "" || len(d.Panels) == 0 {
		t.Fatalf("the dashboard has no uid, title or panels: %+v", d)
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] || p.Title == "" {
			t.Errorf("panel %d %q: ids are unique and every panel is titled", p.ID, p.Title)
		}
		ids[p.ID] = true
	}
}
