package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/garm-dev/garm/examples/bank"
)

// TestAPersonOnTheLoopSeesANotifiedFreezeInARealBrowser: a card frozen by the support
// assistant (cards.v1.freeze_card is MODE_NOTIFY) runs without asking anyone and appears in the
// approvals service's feed of notified actions for a person cleared for what the call was
// decided with, and not for one who is not.
func TestAPersonOnTheLoopSeesANotifiedFreezeInARealBrowser(t *testing.T) {
	s := startStack(t, testOptions(t))
	c := newClient(t, s)
	d := bankDemo()
	var freezeRoute string
	for _, tool := range s.Catalogue().Artifact.Tools() {
		if tool.FQN == "cards.v1.freeze_card" {
			freezeRoute = tool.Method
		}
	}
	froze := c.call(freezeRoute, c.token(d.support, bank.AssistantAgent), `{"card_id":"`+bank.DemoCard+`","reason":"FREEZE_REASON_LOST"}`)
	if froze.status != 200 {
		t.Fatalf("the freeze: %d %s", froze.status, froze.body)
	}
	eventID := froze.header.Get("Garm-Event-Id")

	// The support lead, cleared for the card team's data, opens the feed from the inbox.
	lead := browserFor(t)
	signInAt(t, lead, s.URLs().Approvals+"/", d.support)
	if err := chromedp.Do(lead, chromedp.Click(chromedp.CSS(`#nav-feed`)), chromedp.WaitVisible(chromedp.CSS(`#feed`))); err != nil {
		t.Fatalf("opening the feed: %v\n%s", err, text(t, lead))
	}
	feed := text(t, lead)
	for what, want := range map[string]string{
		"the tool": "cards.v1.freeze_card", "who called": "user:sam@acme-bank.example",
		"the agent": "agent:support-assistant", "the outcome": "ok", "the event": eventID,
	} {
		if !strings.Contains(feed, want) {
			t.Errorf("the feed does not show %s (%q):\n%s", what, want, feed)
		}
	}

	// The payments approver holds no card data: the freeze is not theirs to read of.
	approver := browserFor(t)
	signInAt(t, approver, s.URLs().Approvals+"/", d.approver)
	if err := chromedp.Do(approver, chromedp.Click(chromedp.CSS(`#nav-feed`)), chromedp.WaitVisible(chromedp.CSS(`h2`))); err != nil {
		t.Fatalf("opening the approver's feed: %v", err)
	}
	if got := text(t, approver); !strings.Contains(got, "No notified action you may see") || strings.Contains(got, eventID) || strings.Contains(got, "freeze_card") {
		t.Errorf("the approver's feed:\n%s", got)
	}
}
