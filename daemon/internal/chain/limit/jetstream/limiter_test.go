package jetstream_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/limit"
	limitjs "github.com/garm-dev/garm/daemon/internal/chain/limit/jetstream"
	"github.com/garm-dev/garm/daemon/internal/deny"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/nats-io/nats.go/jetstream"
)

// compiled is one rate limit of tool t.v1.tool, compiled as Mount would.
func compiled(t testing.TB, l *toolv1.Limit) []*limit.Limit {
	t.Helper()
	tool := &call.Tool{FQN: "t.v1.tool", Policy: &toolv1.ToolPolicy{}}
	ls, problems := limit.Compile([]*call.Tool{tool}, []*planv1.LimitPlan{{Tool: tool.FQN, Limit: l, Origin: planv1.LimitOrigin_LIMIT_ORIGIN_DEPLOYMENT}})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return ls.Of(tool)
}

func rate(id string, count uint32, w toolv1.Limit_Window, key ...toolv1.Limit_KeyPart) *toolv1.Limit {
	return &toolv1.Limit{Id: id, Description: "a test limit", Key: key, Cost: 1,
		Kind: &toolv1.Limit_Rate_{Rate: &toolv1.Limit_Rate{Count: count, Window: w}}}
}

func streams(t *testing.T) jetstream.JetStream {
	t.Helper()
	js := connect(t)
	if err := limitjs.Create(context.Background(), js, 1); err != nil {
		t.Fatal(err)
	}
	return js
}

var alice = &call.Principal{Tenant: "acme", Subject: "user:alice"}

// admits runs n concurrent clients, each admitting calls until refused,
// and returns how many were admitted.
func admits(t *testing.T, limiters []*limit.Limiter, lims []*limit.Limit, clients int) (admitted, refused int64) {
	t.Helper()
	var a, r atomic.Int64
	var wg sync.WaitGroup
	for i := range clients {
		l := limiters[i%len(limiters)]
		wg.Go(func() {
			for misses := 0; misses < 3; {
				var tk limit.Ticket
				_, err := l.Admit(context.Background(), lims, alice, &tk)
				switch d := (*deny.Denied)(nil); {
				case err == nil:
					a.Add(1)
				case errors.As(err, &d) && d.Code == deny.RateLimited:
					r.Add(1)
					misses++
				default:
					r.Add(1)
					misses++
				}
			}
		})
	}
	wg.Wait()
	return a.Load(), r.Load()
}

// Twenty-four clients on one hot key are admitted exactly the limit.
func TestConcurrentClientsOnOneHotKeyAreAdmittedExactlyTheLimit(t *testing.T) {
	t.Parallel()
	js := streams(t)
	lims := compiled(t, rate("hot", 500, toolv1.Limit_WINDOW_DAY, toolv1.Limit_KEY_PART_SUBJECT))
	l := limit.New(limit.Config{Counter: limitjs.New(js), Bound: 2 * time.Second})
	if got, _ := admits(t, []*limit.Limiter{l}, lims, 24); got != 500 {
		t.Fatalf("admitted %d, want exactly 500", got)
	}
}

// Replicas whose clocks disagree by a minute count in the same window: the
// window is the bus's clock, not the replica's.
func TestReplicasWhoseClocksDisagreeCountOneWindow(t *testing.T) {
	t.Parallel()
	js := streams(t)
	lims := compiled(t, rate("skew", 4, toolv1.Limit_WINDOW_MINUTE, toolv1.Limit_KEY_PART_SUBJECT))
	var limiters []*limit.Limiter
	for _, skew := range []time.Duration{-time.Minute, 0, time.Minute} {
		limiters = append(limiters, limit.New(limit.Config{Counter: limitjs.New(js), Now: func() time.Time { return time.Now().Add(skew) }}))
	}
	// Away from a window's edge, so one run sees one window.
	if s := time.Now().Second(); s > 55 {
		time.Sleep(time.Duration(61-s) * time.Second)
	}
	if got, _ := admits(t, limiters, lims, 6); got != 4 {
		t.Fatalf("admitted %d across skewed replicas, want 4", got)
	}
}

// A window that ends admits again, on its own.
func TestAWindowThatEndsAdmitsAgain(t *testing.T) {
	t.Parallel()
	js := streams(t)
	lims := compiled(t, rate("per_second", 2, toolv1.Limit_WINDOW_SECOND, toolv1.Limit_KEY_PART_SUBJECT))
	l := limit.New(limit.Config{Counter: limitjs.New(js)})
	if got, _ := admits(t, []*limit.Limiter{l}, lims, 2); got != 2 {
		t.Fatalf("admitted %d, want 2", got)
	}
	var tk limit.Ticket
	if _, err := l.Admit(context.Background(), lims, alice, &tk); err == nil {
		// The window may have turned between the two; then it admits, and
		// the next must be refused within this one.
		if _, err := l.Admit(context.Background(), lims, alice, &tk); err == nil {
			if _, err := l.Admit(context.Background(), lims, alice, &tk); err == nil {
				t.Fatal("a spent window admitted again")
			}
		}
	}
	time.Sleep(1100 * time.Millisecond)
	if _, err := l.Admit(context.Background(), lims, alice, &tk); err != nil {
		t.Fatalf("the next window refused: %v", err)
	}
	var d *deny.Denied
	_, err := l.Admit(context.Background(), lims, alice, &tk)
	_, err = l.Admit(context.Background(), lims, alice, &tk)
	if !errors.As(err, &d) || d.Limit == nil || d.Limit.RetryAfter > time.Second || d.Limit.Count != 2 {
		t.Fatalf("a refusal's answer: %v %+v", err, d)
	}
}

// A caller who mints new subjects meets the tenant's key cap, and no value
// of the key ever shapes a counter subject.
func TestACallerMintingSubjectsMeetsTheKeyCapAndNoValueReachesASubject(t *testing.T) {
	t.Parallel()
	js := streams(t)
	lims := compiled(t, rate("per_subject", 100, toolv1.Limit_WINDOW_MINUTE, toolv1.Limit_KEY_PART_TENANT, toolv1.Limit_KEY_PART_SUBJECT))
	l := limit.New(limit.Config{Counter: limitjs.New(js), KeyCap: 5})
	ctx := context.Background()
	admitted := 0
	for i := range 20 {
		var tk limit.Ticket
		p := &call.Principal{Tenant: "acme", Subject: "user:minted-" + string(rune('a'+i)) + ".>*"}
		if _, err := l.Admit(ctx, lims, p, &tk); err == nil {
			admitted++
		} else if !strings.Contains(err.Error(), "key cap") {
			t.Fatalf("minted subject %d: %v", i, err)
		}
	}
	if admitted != 5 {
		t.Fatalf("%d minted keys admitted, want the cap of 5", admitted)
	}
	s, err := js.Stream(ctx, "GARM_LIMITS_MINUTE")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(">"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(info.State.Subjects); n > 5+1 {
		t.Fatalf("%d counter subjects for a cap of 5 keys", n)
	}
	for subj := range info.State.Subjects {
		if strings.Contains(subj, "minted") || strings.Contains(subj, "acme") || strings.Contains(subj, "alice") {
			t.Fatalf("a key's value is in the subject %s", subj)
		}
	}
}

// A call counted against one of its tool's limits and refused by the next
// gives the first count back: only a call that passes them all is counted.
func TestACallRefusedByItsSecondLimitGivesTheFirstItsCountBack(t *testing.T) {
	t.Parallel()
	js := streams(t)
	roomy := rate("roomy", 2, toolv1.Limit_WINDOW_DAY, toolv1.Limit_KEY_PART_SUBJECT)
	tight := rate("tight", 1, toolv1.Limit_WINDOW_DAY, toolv1.Limit_KEY_PART_TENANT)
	lims := compiled2(t, roomy, tight)
	l := limit.New(limit.Config{Counter: limitjs.New(js), Bound: 2 * time.Second})
	ctx := context.Background()
	var first limit.Ticket
	if _, err := l.Admit(ctx, lims, alice, &first); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		var tk limit.Ticket
		refusing, err := l.Admit(ctx, lims, alice, &tk)
		if err == nil || refusing.ID != "tight" || tk.Counted() {
			t.Fatalf("over the tight limit: %v by %v, counted %v", err, refusing, tk.Counted())
		}
	}
	// roomy, keyed on the subject, counted only the first call: the same
	// subject in another tenant, under a tight limit of its own, takes
	// roomy's second place. Had roomy kept the refused calls' counts, it
	// would refuse.
	var other limit.Ticket
	if refusing, err := l.Admit(ctx, lims, &call.Principal{Tenant: "other", Subject: alice.Subject}, &other); err != nil {
		t.Fatalf("roomy kept the counts of calls tight refused: %v by %v", err, refusing)
	}
}

// compiled2 is compiled for two limits of one tool.
func compiled2(t testing.TB, ls ...*toolv1.Limit) []*limit.Limit {
	t.Helper()
	tool := &call.Tool{FQN: "t.v1.tool", Policy: &toolv1.ToolPolicy{}}
	var plans []*planv1.LimitPlan
	for _, l := range ls {
		plans = append(plans, &planv1.LimitPlan{Tool: tool.FQN, Limit: l, Origin: planv1.LimitOrigin_LIMIT_ORIGIN_DEPLOYMENT})
	}
	compiled, problems := limit.Compile([]*call.Tool{tool}, plans)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return compiled.Of(tool)
}
