package plugin

import (
	"testing"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

func TestAPlanFileIsNamedAfterItsPackage(t *testing.T) {
	for pkg, want := range map[string]string{
		"calc.v1":          "calc/v1/calc_v1.garm.json",
		"acme.payments.v2": "acme/payments/v2/acme_payments_v2.garm.json",
		"flat":             "flat/flat.garm.json",
	} {
		if got := PlanFileName(pkg); got != want {
			t.Errorf("PlanFileName(%q) = %q, want %q", pkg, got, want)
		}
	}
}

func TestAPlanIsIndentedProtojsonWithScalarListsOnOneLine(t *testing.T) {
	plan := &planv1.PackagePlan{Package: "p.v1", Messages: []*planv1.MessagePlan{{
		Message: "p.v1.Res",
		Schema:  `{"additionalProperties":false,"type":"object"}`,
		Rules: []*planv1.FieldRule{{
			Path: "a.b", Numbers: []int32{3, 1}, Read: toolv1.Clearance_CLEARANCE_INTERNAL, Write: toolv1.Clearance_CLEARANCE_INTERNAL,
			Compartments: []string{"x", "y"},
			OnDeny:       &toolv1.Redaction{Kind: &toolv1.Redaction_Mask_{Mask: &toolv1.Redaction_Mask{With: "<&>"}}},
			Container:    planv1.Container_CONTAINER_LEAF,
		}},
	}}}
	got, err := MarshalPlan(plan)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "package": "p.v1",
  "messages": [
    {
      "message": "p.v1.Res",
      "schema": "{\"additionalProperties\":false,\"type\":\"object\"}",
      "rules": [
        {
          "path": "a.b",
          "numbers": [3, 1],
          "read": "CLEARANCE_INTERNAL",
          "write": "CLEARANCE_INTERNAL",
          "compartments": ["x", "y"],
          "onDeny": {
            "mask": {
              "with": "<&>"
            }
          },
          "container": "CONTAINER_LEAF"
        }
      ]
    }
  ]
}
`
	if string(got) != want {
		t.Errorf("MarshalPlan:\n%s\nwant:\n%s", got, want)
	}
	var back planv1.PackagePlan
	if err := protojson.Unmarshal(got, &back); err != nil || !proto.Equal(&back, plan) {
		t.Errorf("the plan file does not read back as the plan (err %v)", err)
	}
}
