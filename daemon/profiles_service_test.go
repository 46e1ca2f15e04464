package garmd_test

import (
	"context"
	"github.com/garm-dev/garm/runtime/garmtool"
	"testing"

	"github.com/garm-dev/garm/runtime/toolbind"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The profile the profiles service answers every caller with, in full:
// tools never redact, garmd does.
const fullProfile = `{
  "id": "P-100",
  "displayName": "Ada Lovelace",
  "email": "ada@corp.com",
  "phone": "+442071234567",
  "born": "1815-12-10T09:30:00Z",
  "nationalId": "NI-SECRET-1815",
  "cardNumber": "4111111111111111",
  "lastIp": "10.1.2.77",
  "homePage": "https://ada.example/private?token=secret",
  "bureauRef": "BUREAU-77-SECRET",
  "notes": ["called twice", "prefers email"],
  "summary": "Mathematician and writer, known for the Analytical Engine notes."
}`

// profileCard is the card the profiles service renders for id. Its own
// label is left to the floor, the email fact is confidential, and the
// identity section holds one restricted element. A sealed profile's card is
// restricted whole; a broken profile's card is invalid.
func profileCard(id string) string {
	if id == "P-BROKEN" {
		// A fact labelled below its card: the tool's bug, which fails the
		// call for every caller.
		return `{"title": "Broken record", "access": {"clearance": "CLEARANCE_CONFIDENTIAL", "compartments": ["pii-contact"]},
  "body": [{"facts": {"facts": [{"label": "Secret", "value": "BROKEN-SECRET", "access": {"clearance": "CLEARANCE_INTERNAL", "compartments": ["pii-contact"]}}]}}]}`
	}
	if id == "P-SEALED" {
		return `{"kind": "KIND_RECORD", "subjectId": "P-SEALED", "title": "Sealed record",
  "body": [{"text": {"text": "Sealed by court order."}}],
  "access": {"clearance": "CLEARANCE_RESTRICTED", "compartments": ["pii-contact", "pii-identity"]}}`
	}
	return `{
  "kind": "KIND_RECORD", "subjectId": "` + id + `", "title": "Ada Lovelace", "state": "STATE_OPEN",
  "body": [
    {"facts": {"facts": [
      {"label": "Name", "value": "Ada Lovelace", "field": "display_name"},
      {"label": "Email", "value": "ada@corp.com", "field": "email",
       "access": {"clearance": "CLEARANCE_CONFIDENTIAL", "compartments": ["pii-contact"]}}
    ]}},
    {"section": {"title": "Identity", "elements": [
      {"facts": {"facts": [{"label": "National id", "value": "NI-SECRET-1815", "field": "national_id"}]},
       "access": {"clearance": "CLEARANCE_RESTRICTED", "compartments": ["pii-contact", "pii-identity"]}}
    ]}},
    {"text": {"text": "Prefers email."}}
  ],
  "actions": [{"id": "open", "label": "Open", "style": "STYLE_PRIMARY"}]
}`
}

// startProfilesService serves the fixture's Profiles service, answering in
// full.
func startProfilesService(t testing.TB, url string, opts ...garmtool.Option) {
	t.Helper()
	_ = serveFixtureService(t, url, "profiles", "fix.v1.Profiles", profilesHandler, opts...)
}

func profilesHandler(method string, out protoreflect.MessageDescriptor) toolbind.Handler {
	return func(_ context.Context, req proto.Message) (proto.Message, error) {
		in := req.ProtoReflect()
		var answer string
		switch method {
		case "GetProfile":
			answer = fullProfile
		case "GetProfileCard":
			answer = profileCard(str(in, "id"))
		case "ListProfileCards":
			ids := in.Get(in.Descriptor().Fields().ByName("ids")).List()
			answer = `{"cards": [`
			for i := range ids.Len() {
				if i > 0 {
					answer += ","
				}
				answer += profileCard(ids.Get(i).String())
			}
			answer += `]}`
		}
		res := dynamicpb.NewMessage(out)
		if err := protojson.Unmarshal([]byte(answer), res); err != nil {
			return nil, err
		}
		return res, nil
	}
}
