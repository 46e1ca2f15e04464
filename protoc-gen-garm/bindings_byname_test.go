package main

import (
	"fmt"
	"strings"
	"testing"

	severalv1 "github.com/garm-dev/garm/protoc-gen-garm/testdata/several_services/want"
)

// A test names a tool rather than indexing <Service>Tools, so a tool added
// in the middle of a service cannot make it call another.
func TestAToolIsNamedByItsShortNameOrFQN(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"ping", "several.v1.ping"} {
		if got := severalv1.AccountsServiceTool(name); got.FQN != "several.v1.ping" || got.Method != "/several.v1.AccountsService/Ping" {
			t.Errorf("AccountsServiceTool(%q) = %+v, want several.v1.ping", name, got)
		}
	}
	if got := severalv1.AccountsServiceTool("get_balance"); got != severalv1.AccountsServiceTools[0] {
		t.Errorf("AccountsServiceTool(get_balance) = %+v", got)
	}
}

func TestNamingAToolThatIsNotThereSaysWhichToolsThereAre(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"pong", "other.v1.ping", "transfer", "several.v1.transfer", ""} {
		panicked := func() (p any) {
			defer func() { p = recover() }()
			severalv1.AccountsServiceTool(name)
			return nil
		}()
		msg := fmt.Sprint(panicked)
		if panicked == nil || !strings.Contains(msg, fmt.Sprintf("%q", name)) || !strings.Contains(msg, "its tools are get_balance, ping") {
			t.Errorf("AccountsServiceTool(%q) panicked with %v, want the name and the tools there are", name, panicked)
		}
	}
}
