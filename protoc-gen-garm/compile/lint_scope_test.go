package compile_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/garm-dev/garm/protoc-gen-garm/compile"
)

// taxonomy is a file declaring compartments and tool sets, imported by the
// files that use them.
const taxonomy = `syntax = "proto3";
package tax.v1;
import "garm/tool/v1/tool.proto";
option (garm.tool.v1.compartments) = {declared: [
  {name: "financial" description: "Balances and payments."}
]};
option (garm.tool.v1.tool_sets) = {declared: [
  {name: "payments" description: "Moving money."}
]};
`

// usesTaxonomy is a package whose tool names a compartment, a tool set and
// a compensating tool that live elsewhere.
func usesTaxonomy(pkg, withImport string) string {
	return `syntax = "proto3";
package ` + pkg + `;
import "garm/tool/v1/tool.proto";
` + withImport + `
service Cards {
  rpc Freeze(Req) returns (Res) { option (garm.tool.v1.tool) = {
    description: "Freezes a card." verb: VERB_WRITE min_clearance: CLEARANCE_PUBLIC
    compartments: "financial" sets: "payments"
    effects: {reversibility: REVERSIBILITY_COMPENSABLE compensating_tool: "unfreeze_card"}
  }; }
}
message Req {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC};
  optional string card_id = 1;
}
message Res {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC};
  optional bool frozen = 1;
}
`
}

// unfreeze is another package holding the compensating tool.
const unfreeze = `syntax = "proto3";
package unfreeze.v1;
import "garm/tool/v1/tool.proto";
service Cards {
  rpc Unfreeze(Req) returns (Res) { option (garm.tool.v1.tool) = {
    name: "unfreeze_card" description: "Unfreezes a card." verb: VERB_WRITE min_clearance: CLEARANCE_PUBLIC
    effects: {reversibility: REVERSIBILITY_FULL}
  }; }
}
message Req {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC};
  optional string card_id = 1;
}
message Res {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC};
  optional bool frozen = 1;
}
`

func lintScoped(t *testing.T, scope compile.Scope, sources map[string]string, files ...string) []string {
	t.Helper()
	lines := []string{}
	for _, d := range compile.Lint(build(t, sources, files...), scope) {
		lines = append(lines, d.String())
	}
	return lines
}

func TestWholeCatalogueRulesAreWarningsInAModuleAndErrorsInACatalogue(t *testing.T) {
	sources := map[string]string{"cards/v1/cards.proto": usesTaxonomy("cards.v1", "")}
	const suffix = "; garm-catalogue build checks it across the whole catalogue"
	module := lintScoped(t, compile.ModuleScope, sources, "cards/v1/cards.proto")
	wantModule := []string{
		`warning: L7: cards.v1.Cards.Freeze: compartment "financial" is not declared in any file` + suffix,
		`warning: L12: cards.v1.Cards.Freeze: compensating_tool "unfreeze_card" names no tool` + suffix,
		`warning: L20: cards.v1.Cards.Freeze: tool set "payments" is not declared in any file` + suffix,
	}
	if !slices.Equal(module, wantModule) {
		t.Errorf("module scope:\n got %q\nwant %q", module, wantModule)
	}
	catalogue := lintScoped(t, compile.CatalogueScope, sources, "cards/v1/cards.proto")
	wantCatalogue := []string{
		`error: L7: cards.v1.Cards.Freeze: compartment "financial" is not declared in any file`,
		`error: L12: cards.v1.Cards.Freeze: compensating_tool "unfreeze_card" names no tool`,
		`error: L20: cards.v1.Cards.Freeze: tool set "payments" is not declared in any file`,
	}
	if !slices.Equal(catalogue, wantCatalogue) {
		t.Errorf("catalogue scope:\n got %q\nwant %q", catalogue, wantCatalogue)
	}
}

func TestDeclarationsInAnImportedFileAndToolsInAnotherPackageCount(t *testing.T) {
	sources := map[string]string{
		"tax/v1/tax.proto":           taxonomy,
		"cards/v1/cards.proto":       usesTaxonomy("cards.v1", `import "tax/v1/tax.proto";`),
		"unfreeze/v1/unfreeze.proto": unfreeze,
	}
	for _, scope := range []compile.Scope{compile.ModuleScope, compile.CatalogueScope} {
		// Only the two tool packages are linted; the taxonomy arrives as an
		// import.
		if got := lintScoped(t, scope, sources, "cards/v1/cards.proto", "unfreeze/v1/unfreeze.proto"); len(got) != 0 {
			t.Errorf("scope %d: got %q, want no diagnostics", scope, got)
		}
	}
}

func TestAToolNameUsedInTwoPackagesIsAWarningInAModule(t *testing.T) {
	sources := map[string]string{
		"l3/v1/a.proto": contract("l3.v1", "service Svc {\n  rpc Lookup(Req) returns (Res) "+tool("")+"\n}"),
		"l3/v2/b.proto": contract("l3.v2", "service Svc {\n  rpc Lookup(Req) returns (Res) "+tool("")+"\n}"),
	}
	got := lintScoped(t, compile.ModuleScope, sources, "l3/v1/a.proto", "l3/v2/b.proto")
	want := []string{`warning: L3: l3.v2.Svc.Lookup: tool name "lookup" is also used by l3.v1.Svc.Lookup; garm-catalogue build checks it across the whole catalogue`}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestConflictingDeclarationsAreErrorsInEveryScope(t *testing.T) {
	other := `syntax = "proto3";
package tax.v2;
import "garm/tool/v1/tool.proto";
option (garm.tool.v1.compartments) = {declared: [{name: "financial" description: "Money."}]};
option (garm.tool.v1.tool_sets) = {declared: [{name: "payments" description: "Moving money."}]};
`
	sources := map[string]string{"tax/v1/tax.proto": taxonomy, "tax/v2/tax.proto": other}
	want := []string{`error: L29: tax/v2/tax.proto: compartment "financial" is declared with a different description in tax/v1/tax.proto`}
	for _, scope := range []compile.Scope{compile.ModuleScope, compile.CatalogueScope} {
		// Given in reverse order: declarations are read in path order.
		if got := lintScoped(t, scope, sources, "tax/v2/tax.proto", "tax/v1/tax.proto"); !slices.Equal(got, want) {
			t.Errorf("scope %d:\n got %q\nwant %q", scope, got, want)
		}
	}
}

func TestAFieldReachedByManyToolsIsReportedOnce(t *testing.T) {
	src := `syntax = "proto3";
package once.v1;
import "garm/tool/v1/tool.proto";
service Svc {
  rpc A(Req) returns (Res) ` + tool("") + `
  rpc B(Req) returns (Res) ` + tool("") + `
}
message Req {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC};
  optional string q = 1;
}
message Res {
  optional string unpoliced = 1;
}
`
	got := lintScoped(t, compile.CatalogueScope, map[string]string{"once/v1/a.proto": src}, "once/v1/a.proto")
	want := []string{
		// Once, at the first tool; and no L11, which cannot judge a field
		// without a policy.
		"error: L1: once.v1.Svc.A(output).unpoliced: the field has no policy: declare (garm.tool.v1.field_policy) on it or (garm.tool.v1.default_field_policy) on once.v1.Res",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// A misspelt compartment is an error at catalogue build that names the
// declared compartment meant, as the generator's warning does.
func TestAMisspeltCompartmentIsAnErrorInACatalogueNamingTheClosestDeclared(t *testing.T) {
	sources := map[string]string{
		"tax/v1/tax.proto":           taxonomy,
		"cards/v1/cards.proto":       strings.Replace(usesTaxonomy("cards.v1", `import "tax/v1/tax.proto";`), `"financial"`, `"finacial"`, 1),
		"unfreeze/v1/unfreeze.proto": unfreeze,
	}
	got := lintScoped(t, compile.CatalogueScope, sources, "cards/v1/cards.proto", "unfreeze/v1/unfreeze.proto")
	want := []string{`error: L7: cards.v1.Cards.Freeze: compartment "finacial" is not declared in any file (did you mean "financial"?)`}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
