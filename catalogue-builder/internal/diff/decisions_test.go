package diff

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

const fqn = "shop.v1.update_order"

func TestClearanceRequirementDirections(t *testing.T) {
	const (
		unspecified  = toolv1.Clearance_CLEARANCE_UNSPECIFIED
		public       = toolv1.Clearance_CLEARANCE_PUBLIC
		internal     = toolv1.Clearance_CLEARANCE_INTERNAL
		confidential = toolv1.Clearance_CLEARANCE_CONFIDENTIAL
		restricted   = toolv1.Clearance_CLEARANCE_RESTRICTED
	)
	tests := []struct {
		old, new toolv1.Clearance
		want     string // a direction, or "" for no change
	}{
		{internal, public, "widening"},
		{public, internal, "narrowing"},
		{restricted, confidential, "widening"},
		{internal, internal, ""},
		// UNSPECIFIED is met by no one (design 3.2): leaving it reaches more.
		{unspecified, restricted, "widening"},
		{public, unspecified, "narrowing"},
		// A level a newer vocabulary inserts ranks by its number.
		{confidential, toolv1.Clearance(25), "widening"},
	}
	for _, tt := range tests {
		got := ""
		if d, ok := strength(requirement(tt.old), requirement(tt.new)); ok {
			got = d.String()
		}
		if got != tt.want {
			t.Errorf("%v → %v: %q, want %q", tt.old, tt.new, got, tt.want)
		}
	}
}

func TestApprovalDecisions(t *testing.T) {
	const (
		unspecified = toolv1.ToolPolicy_Approval_MODE_UNSPECIFIED
		none        = toolv1.ToolPolicy_Approval_MODE_NONE
		notify      = toolv1.ToolPolicy_Approval_MODE_NOTIFY
		grant       = toolv1.ToolPolicy_Approval_MODE_GRANT
	)
	withTerms := func(m toolv1.ToolPolicy_Approval_Mode) *toolv1.ToolPolicy_Approval {
		return &toolv1.ToolPolicy_Approval{Mode: m, MaxGrantAgeSeconds: 60, MaterialFields: []string{"order_id"}}
	}
	fourEyes := func(a *toolv1.ToolPolicy_Approval) *toolv1.ToolPolicy_Approval {
		a.DistinctApprover = true
		return a
	}
	tests := []struct {
		name     string
		old, new *toolv1.ToolPolicy_Approval
		want     []string
	}{
		{"unspecified and NONE are equally weak", withTerms(unspecified), withTerms(none), nil},
		{"NONE to NOTIFY", withTerms(none), withTerms(notify), []string{"narrowing: " + fqn + ": approval strengthened to NOTIFY, was NONE"}},
		{"NOTIFY to unspecified", withTerms(notify), withTerms(unspecified), []string{"widening: " + fqn + ": approval weakened to UNSPECIFIED, was NOTIFY"}},
		{"terms beside NOTIFY bind nothing", withTerms(notify), &toolv1.ToolPolicy_Approval{Mode: notify}, nil},
		{"GRANT to NONE is one change", withTerms(grant), &toolv1.ToolPolicy_Approval{Mode: none}, []string{"widening: " + fqn + ": approval weakened to NONE, was GRANT"}},
		{"a mode this build does not know", withTerms(grant), withTerms(toolv1.ToolPolicy_Approval_Mode(9)), []string{"unclear: " + fqn + ": approval changed to 9, was GRANT"}},
		{"an approver floor set where none was: UNSPECIFIED is met by no approver", withTerms(grant),
			&toolv1.ToolPolicy_Approval{Mode: grant, MaxGrantAgeSeconds: 60, MaterialFields: []string{"order_id"}, ApproverMinClearance: toolv1.Clearance_CLEARANCE_INTERNAL},
			[]string{"widening: " + fqn + ": approver clearance lowered to INTERNAL, was UNSPECIFIED"}},
		{"four eyes turned off", fourEyes(withTerms(grant)), withTerms(grant),
			[]string{"widening: " + fqn + ": distinct_approver turned off: the caller or an actor of its chain may approve its own call"}},
		{"four eyes turned on", withTerms(grant), fourEyes(withTerms(grant)),
			[]string{"narrowing: " + fqn + ": distinct_approver turned on: the approver must be neither the caller nor an actor of its chain"}},
		{"four eyes beside NOTIFY bind nothing", fourEyes(withTerms(notify)), withTerms(notify), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &report{}
			r.approval(fqn, tt.old, tt.new)
			if got := lines(t, r.changes); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAuditDecisions(t *testing.T) {
	const (
		unspecified = toolv1.ToolPolicy_Audit_LEVEL_UNSPECIFIED
		ledger      = toolv1.ToolPolicy_Audit_LEVEL_LEDGER
		audit       = toolv1.ToolPolicy_Audit_LEVEL_AUDIT
	)
	tests := []struct {
		name     string
		old, new *toolv1.ToolPolicy_Audit
		want     []string
	}{
		{"unspecified is LEDGER", &toolv1.ToolPolicy_Audit{Level: unspecified}, &toolv1.ToolPolicy_Audit{Level: ledger}, nil},
		{"no declaration is LEDGER", nil, &toolv1.ToolPolicy_Audit{Level: ledger}, nil},
		{"terms beside LEDGER bind nothing", &toolv1.ToolPolicy_Audit{Level: ledger, RetainDays: 9, FailClosed: true}, &toolv1.ToolPolicy_Audit{Level: ledger}, nil},
		{"AUDIT to LEDGER is one change", &toolv1.ToolPolicy_Audit{Level: audit, RetainDays: 9, FailClosed: true}, nil,
			[]string{"widening: " + fqn + ": audit weakened to UNSPECIFIED, was AUDIT"}},
		{"a level this build does not know", &toolv1.ToolPolicy_Audit{Level: audit}, &toolv1.ToolPolicy_Audit{Level: 7},
			[]string{"unclear: " + fqn + ": audit changed to 7, was AUDIT"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &report{}
			r.audit(fqn, tt.old, tt.new)
			if got := lines(t, r.changes); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRedactionsAreDescribedByWhatTheyDo(t *testing.T) {
	tests := []struct {
		redaction *toolv1.Redaction
		want      string
	}{
		{nil, "omit"},
		{&toolv1.Redaction{}, "omit"},
		{&toolv1.Redaction{Kind: &toolv1.Redaction_Omit_{Omit: &toolv1.Redaction_Omit{}}}, "omit"},
		{&toolv1.Redaction{Kind: &toolv1.Redaction_Mask_{Mask: &toolv1.Redaction_Mask{}}}, "mask"},
		{&toolv1.Redaction{Kind: &toolv1.Redaction_Mask_{Mask: &toolv1.Redaction_Mask{With: "(hidden)"}}}, `mask "(hidden)"`},
		{&toolv1.Redaction{Kind: &toolv1.Redaction_Hash_{Hash: &toolv1.Redaction_Hash{PerTenantSalt: true}}}, "hash with a per-tenant salt"},
		{&toolv1.Redaction{Kind: &toolv1.Redaction_KeepLast_{KeepLast: &toolv1.Redaction_KeepLast{N: 4, Reason: "ignored"}}}, "keep_last 4 bytes"},
		{&toolv1.Redaction{Kind: &toolv1.Redaction_Truncate_{Truncate: &toolv1.Redaction_Truncate{N: 40, Runes: true}}}, "truncate 40 runes"},
		{&toolv1.Redaction{Kind: &toolv1.Redaction_IpPrefix_{IpPrefix: &toolv1.Redaction_IpPrefix{Bits: 24}}}, "ip_prefix /24"},
		{&toolv1.Redaction{Kind: &toolv1.Redaction_DateGrain_{DateGrain: &toolv1.Redaction_DateGrain{Grain: toolv1.Grain_GRAIN_YEAR}}}, "date_grain YEAR"},
	}
	for _, tt := range tests {
		if got := redaction(tt.redaction); got != tt.want {
			t.Errorf("redaction(%v) = %q, want %q", tt.redaction, got, tt.want)
		}
	}
}

func TestAudiencesReadAsTheSpecReadsThem(t *testing.T) {
	agent, person := toolv1.Audience_AUDIENCE_AGENT, toolv1.Audience_AUDIENCE_PERSON
	same := [][]toolv1.Audience{nil, {toolv1.Audience_AUDIENCE_UNSPECIFIED}, {agent}, {agent, agent}}
	for _, a := range same {
		if got := audiences(a); !slices.Equal(got, []string{"AGENT"}) {
			t.Errorf("audiences(%v) = %v, want [AGENT]", a, got)
		}
	}
	if got := audiences([]toolv1.Audience{person, agent}); !slices.Equal(got, []string{"AGENT", "PERSON"}) {
		t.Errorf("audiences(PERSON, AGENT) = %v", got)
	}
}

func TestDirectionsPrintAsTheirWireSpelling(t *testing.T) {
	for d, want := range map[Direction]string{Widening: "widening", Narrowing: "narrowing", Unclear: "unclear", Direction(7): "Direction(7)"} {
		if got := d.String(); got != want {
			t.Errorf("Direction(%d).String() = %q, want %q", int(d), got, want)
		}
	}
}

func TestHasWideningLooksAtEveryChange(t *testing.T) {
	tests := []struct {
		changes []Change
		want    bool
	}{
		{nil, false},
		{[]Change{{Direction: Narrowing}, {Direction: Unclear}}, false},
		{[]Change{{Direction: Narrowing}, {Direction: Widening}}, true},
		// The zero Change widens: a direction forgotten fails the gate.
		{[]Change{{}}, true},
	}
	for _, tt := range tests {
		if got := HasWidening(tt.changes); got != tt.want {
			t.Errorf("HasWidening(%v) = %v, want %v", tt.changes, got, tt.want)
		}
	}
}

func TestChangesSortByDirectionThenToolThenSentence(t *testing.T) {
	changes := []Change{
		{Unclear, "a.v1.x", "a"},
		{Narrowing, "b.v1.y", "b"},
		{Widening, "b.v1.y", "b"},
		{Widening, "a.v1.x", "z"},
		{Widening, "a.v1.x", "c"},
		{Widening, "", "catalogue"},
		{Narrowing, "a.v1.x", "a"},
	}
	sortChanges(changes)
	want := []Change{
		{Widening, "", "catalogue"},
		{Widening, "a.v1.x", "c"},
		{Widening, "a.v1.x", "z"},
		{Widening, "b.v1.y", "b"},
		{Narrowing, "a.v1.x", "a"},
		{Narrowing, "b.v1.y", "b"},
		{Unclear, "a.v1.x", "a"},
	}
	if !slices.Equal(changes, want) {
		t.Errorf("sorted\n%v\nwant\n%v", changes, want)
	}
}

// lines is what Write prints for changes, one string per line.
func lines(t *testing.T, changes []Change) []string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, changes); err != nil {
		t.Fatal(err)
	}
	if b.Len() == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}
