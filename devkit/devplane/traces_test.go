package devplane_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// In the printed tree, garmd's spans say they are garmd's and the tool's
// say they are the tool service's: the service.name of each span's
// resource.
func TestATraceTellsTheToolsSpansFromGarmds(t *testing.T) {
	t.Parallel()
	const traceID = "5af92f3577b34da6a3ce929d0e0e4736"
	a := send(t, http.MethodPost, plane.URLs().Garmd+"/calc.v1.Calculator/Add", "", `{"a": 40, "b": 2}`,
		"Authorization", "Bearer "+token(t, "outsider"), "Content-Type", "application/json",
		"Traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	if a.status != http.StatusOK {
		t.Fatalf("%d %s", a.status, a.body)
	}
	var tree string
	for deadline := time.Now().Add(waitTimeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		all := planeTraces.String()
		if i := strings.Index(all, "trace "+traceID+"\n"); i >= 0 {
			tree, _, _ = strings.Cut(all[i+len("trace "+traceID+"\n"):], "\ntrace ")
			if strings.Contains(tree, "calc.v1.add ") && strings.Count(tree, "\n") > 3 {
				break
			}
		}
	}
	var root, tool string
	for _, line := range strings.Split(tree, "\n") {
		switch {
		case strings.HasPrefix(line, "└─ execute_tool calc.v1.add "):
			root = line
		case strings.Contains(line, "─ calc.v1.add "):
			tool = line
		}
	}
	if !strings.HasSuffix(root, "  [garmd]") {
		t.Errorf("garmd's span is not garmd's: %q in\n%s", root, tree)
	}
	if !strings.HasSuffix(tool, "  [calculator]") {
		t.Errorf("the tool's span is not the calculator's: %q in\n%s", tool, tree)
	}
	if strings.Count(tree, "[") != 2 {
		t.Errorf("only where the service changes is it named:\n%s", tree)
	}
}
