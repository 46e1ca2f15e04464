package garmd

import (
	"context"
	"fmt"
	"github.com/garm-dev/garm/approvals/pending"
	"io"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/gctarget"
	"github.com/garm-dev/garm/runtime/wire"
)

// Report is what garmd says at startup about what it is and will do (design
// 7.1): the catalogue it serves, where it listens, whom it trusts, where the
// ledger goes, how the catalogue is refreshed, and which optional steps are
// on — with the declarations that therefore refuse to mount.
type Report struct {
	Version   string
	Catalogue catalogueReport
	Tools     []toolReport
	Listen    string
	Admin     string
	Bus       string
	// Bounds are the tool plane's bounds on slow and abusive callers.
	Bounds boundsReport
	// BusAuth says how garmd authenticated to the bus, BusTLS whether the
	// connection is encrypted.
	BusAuth, BusTLS string
	// SpentGrants is what garmd could learn of who may write or forget
	// spent grants; SpentGrantsWarn says whether it is a warning.
	SpentGrants     []string
	SpentGrantsWarn bool
	Issuers         []issuerReport
	Ledger          string
	Refresh         string
	// Signing says whose signatures the catalogue must carry, and what
	// signed the one serving; "off" without --catalogue-keys.
	Signing string
	Steps   []string
	Refuses []string
	// GC is the garbage collector's target, when garmd set one.
	GC *gctarget.Decision
}

type catalogueReport struct {
	Path, Digest, Producer string
	SchemaVersion          uint32
	Compartments, ToolSets int
	// Attributes are the declared principal attributes; RuleTools the
	// tools carrying instance rules and Rules their rules, once mounted.
	Attributes, RuleTools, Rules int
	Size                         int
	HeapBytes                    uint64
	// FromCheckCache counts the descriptor files built from the check
	// cache's record rather than checked again (--check-cache).
	FromCheckCache int
}

type toolReport struct{ FQN, Verb string }

type boundsReport struct {
	HeaderTimeout, BodyTimeout, RequestTimeout, IdleTimeout time.Duration
	MaxHeaderBytes, MaxInFlight                             int
}

type issuerReport struct{ Issuer, JWKS string }

// stepsReport says which optional steps steps turns on, and which
// declarations therefore refuse to mount.
func stepsReport(steps catalogue.Steps, grantIssuer string) (on []string, refused []string) {
	if steps.Grants {
		kept := "forever"
		if steps.SpentFor > 0 {
			kept = "for " + steps.SpentFor.String()
		}
		on = append(on, fmt.Sprintf("approval grants (step 5): on, from %s; %s keeps spent grants %s", grantIssuer, wire.GrantsSpentBucket, kept))
	} else {
		on = append(on, "approval grants (step 5): off (--grant-issuer)")
		refused = append(refused, "approval.mode MODE_GRANT (needs step 5)")
	}
	if steps.Notify {
		on = append(on, "notify (step 10): on, to "+wire.NotifyStream)
	} else {
		on = append(on, "notify (step 10): off (--notify)")
		refused = append(refused, "approval.mode MODE_NOTIFY (needs --notify)")
	}
	switch r := steps.AuditRetention; {
	case r == nil:
		on = append(on, "audit sink: off (--audit-stream-retention)")
		refused = append(refused, "audit.level LEVEL_AUDIT and audit.fail_closed (need an audit sink)")
	case *r == 0:
		on = append(on, "audit sink: on, to "+wire.AuditStream+", keeping rows indefinitely")
	default:
		on = append(on, fmt.Sprintf("audit sink: on, to %s, keeping rows %s", wire.AuditStream, *r))
		refused = append(refused, fmt.Sprintf("audit.level LEVEL_AUDIT with retain_days beyond %s", *r))
	}
	if steps.Limits {
		on = append(on, "limits: on, counted on the GARM_LIMITS_* counter streams")
	} else {
		on = append(on, "limits: off (--limits)")
		refused = append(refused, "limits (need --limits)")
	}
	if len(refused) == 0 {
		refused = []string{"none"}
	}
	return on, refused
}

func catalogueSummary(path string, gen *catalogue.Generation, heap uint64) catalogueReport {
	return catalogueReport{
		Path:           path,
		Digest:         gen.Digest,
		Producer:       gen.Producer,
		SchemaVersion:  gen.SchemaVersion,
		Compartments:   len(gen.Compartments),
		ToolSets:       len(gen.ToolSets),
		Attributes:     len(gen.Attributes),
		RuleTools:      gen.Rules().Carrying(),
		Rules:          gen.Rules().Count(),
		Size:           gen.Size,
		HeapBytes:      heap,
		FromCheckCache: gen.FromChecked(),
	}
}

func toolsOf(gen *catalogue.Generation) []toolReport {
	out := make([]toolReport, len(gen.Tools))
	for i, t := range gen.Tools {
		out[i] = toolReport{FQN: t.FQN, Verb: t.Verb.String()}
	}
	return out
}

func newReport(ctx context.Context, d *Daemon, gen *catalogue.Generation, heap uint64) *Report {
	r := &Report{
		Version:   Version(),
		Catalogue: catalogueSummary(d.cfg.Catalogue, gen, heap),
		Tools:     toolsOf(gen),
		Listen:    d.cfg.scheme() + d.plane.Addr().String(),
		Admin:     d.cfg.scheme() + d.adminL.Addr().String(),
		Bus:       d.cfg.NATS,
		Bounds: boundsReport{
			HeaderTimeout:  d.cfg.HeaderTimeout,
			BodyTimeout:    d.cfg.BodyTimeout,
			RequestTimeout: d.planeSrv.WriteTimeout,
			IdleTimeout:    d.cfg.IdleTimeout,
			MaxHeaderBytes: d.cfg.MaxHeaderBytes,
			MaxInFlight:    d.cfg.MaxInFlight,
		},
		BusAuth: d.cfg.busAuth(),
		BusTLS:  busTLS(d.nc),
		Ledger:  "log lines (garm.ledger) on garmd's log",
		Refresh: refreshes(d.cfg),
		Signing: signingReport(d.cfg, gen),
		GC:      d.gc,
	}
	r.Steps, r.Refuses = stepsReport(d.opt.steps, d.cfg.GrantIssuer)
	if d.opt.desk != nil {
		r.Steps = append(r.Steps, fmt.Sprintf("approvals: on, requests in %s, decided at %s, Garm-Approval and GET /approvals/<id> served", pending.Bucket, d.cfg.ApprovalsURL))
	} else {
		r.Steps = append(r.Steps, "approvals: off (--approvals)")
	}
	r.SpentGrants, r.SpentGrantsWarn = spentGrantsAccess(ctx, d.nc)
	r.Steps = append(r.Steps, d.quarantineReport())
	if d.mcpResource != "" {
		r.Steps = append(r.Steps, "MCP: on, POST /mcp, resource "+d.mcpResource+" (a token's aud may name it)")
	} else {
		r.Steps = append(r.Steps, "MCP: off (--mcp)")
	}
	if d.cfg.LedgerStream {
		r.Ledger = "JetStream stream GARM_LEDGER (batched), falling back to log lines"
	}
	for i, iss := range d.cfg.Issuers {
		r.Issuers = append(r.Issuers, issuerReport{Issuer: iss, JWKS: d.cfg.JWKS[i]})
	}
	return r
}

// log writes the report as structured lines.
func (r *Report) log(l *slog.Logger) {
	c := r.Catalogue
	l.Info("garmd: starting", "version", r.Version)
	l.Info("garmd: catalogue", "path", c.Path, "digest", c.Digest, "producer", c.Producer,
		"schema_version", c.SchemaVersion, "compartments", c.Compartments, "tool_sets", c.ToolSets,
		"attributes", c.Attributes, "tools_with_rules", c.RuleTools, "instance_rules", c.Rules,
		"artifact_bytes", c.Size, "heap_bytes", c.HeapBytes, "files_from_check_cache", c.FromCheckCache,
		"tools", len(r.Tools), "refresh", r.Refresh)
	l.Info("garmd: catalogue signatures", "signing", r.Signing)
	for _, t := range r.Tools {
		l.Info("garmd: tool", "fqn", t.FQN, "verb", t.Verb)
	}
	l.Info("garmd: listening", "tool_plane", r.Listen, "admin", r.Admin, "bus", r.Bus)
	b := r.Bounds
	l.Info("garmd: bounds", "header_timeout", b.HeaderTimeout.String(), "body_timeout", b.BodyTimeout.String(),
		"request_timeout", b.RequestTimeout.String(), "idle_timeout", b.IdleTimeout.String(),
		"max_header_bytes", b.MaxHeaderBytes, "max_in_flight", b.MaxInFlight)
	l.Info("garmd: bus", "auth", r.BusAuth, "tls", r.BusTLS)
	level := slog.LevelInfo
	if r.SpentGrantsWarn {
		level = slog.LevelWarn
	}
	for _, line := range r.SpentGrants {
		l.Log(context.Background(), level, "garmd: who may write spent grants", "finding", line)
	}
	for _, iss := range r.Issuers {
		l.Info("garmd: trusted issuer", "issuer", iss.Issuer, "jwks", iss.JWKS)
	}
	l.Info("garmd: ledger", "to", r.Ledger)
	if g := r.GC; g != nil {
		l.Info("garmd: garbage collector", "gogc", gogcText(g.Percent), "memory_limit", memoryLimitText(g.MemoryLimit),
			"chosen_by", g.Source, "because", g.Reason)
	}
	l.Info("garmd: optional steps", "steps", strings.Join(r.Steps, "; "))
	l.Info("garmd: these declarations refuse to mount", "declarations", strings.Join(r.Refuses, "; "))
}

// heapInUse is the live heap after a collection: measured around a load, it
// approximates what the loaded generation holds.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// CheckConfig is what `garmd check` takes: the catalogue, and stand-ins
// for the optional steps a serving garmd would run.
type CheckConfig struct {
	Catalogue string
	MaxTools  int
	// Grants stands in for --grant-issuer (--with-grants); a stand-in
	// bucket keeps spent grants forever.
	Grants bool
	// Notify stands in for --notify (--with-notify).
	Notify bool
	// Limits stands in for --limits (--with-limits).
	Limits bool
	// AuditRetention stands in for --audit-stream-retention
	// (--audit-retention).
	AuditRetention *time.Duration
}

// Check loads and mounts a catalogue — a file, or s3:// fetched once — the
// way `garmd serve` would, with no bus and no listener, and writes whether
// it would mount and what it would serve. A catalogue that would not mount
// is the returned error, naming every refusal.
func Check(w io.Writer, c CheckConfig) error {
	before := heapInUse()
	gen, _, err := readCatalogue(context.Background(), c.Catalogue, catalogue.Options{MaxTools: c.MaxTools})
	if err != nil {
		return fmt.Errorf("catalogue %s does not load: %w", c.Catalogue, err)
	}
	heap := heapInUse()
	heap -= min(before, heap)
	s := catalogueSummary(c.Catalogue, gen, heap)
	fmt.Fprintf(w, "catalogue %s\n  digest %s\n  producer %s, annotation schema version %d\n  %d compartments, %d tool sets, %d bytes, about %.1f MiB of heap\n",
		s.Path, s.Digest, s.Producer, s.SchemaVersion, s.Compartments, s.ToolSets, s.Size, float64(s.HeapBytes)/(1<<20))
	fmt.Fprintf(w, "%d tools:\n", len(gen.Tools))
	for _, t := range toolsOf(gen) {
		fmt.Fprintf(w, "  %s %s\n", t.FQN, t.Verb)
	}
	steps := catalogue.Steps{Grants: c.Grants, Notify: c.Notify, AuditRetention: c.AuditRetention, Limits: c.Limits, ToolTimeout: DefaultConfig().ToolTimeout}
	on, _ := stepsReport(steps, "a stand-in issuer")
	fmt.Fprintf(w, "optional steps:\n  %s\n", strings.Join(on, "\n  "))
	refresh := DefaultConfig()
	refresh.Catalogue = c.Catalogue
	fmt.Fprintf(w, "refresh, as garmd serve would with the default --catalogue-poll:\n  %s\n", refreshes(refresh))
	fmt.Fprintln(w, "quarantine: not checked here (no bus); a serving garmd quarantines a package whose running services advertise another garm.identity than:")
	for _, pkg := range slices.Sorted(maps.Keys(gen.Catalogue.GetDescriptorHashes())) {
		fmt.Fprintf(w, "  %s %s\n", pkg, gen.Catalogue.GetDescriptorHashes()[pkg])
	}
	if err := catalogue.Mount(gen, steps); err != nil {
		fmt.Fprintln(w, "would NOT mount")
		return fmt.Errorf("catalogue %s would not mount: %w", c.Catalogue, err)
	}
	fmt.Fprintf(w, "instance rules: %d compiled, on %d of %d tools; %d principal attributes declared\n",
		gen.Rules().Count(), gen.Rules().Carrying(), len(gen.Tools), len(gen.Attributes))
	fmt.Fprintln(w, "would mount")
	return nil
}

// applyGC chooses and applies the garbage collector's target for setting
// in this process's environment.
func applyGC(setting string) *gctarget.Decision {
	d, err := gctarget.Choose(setting, gctarget.FromProcess())
	if err != nil { // Validate refused it already
		return nil
	}
	d = gctarget.Apply(d)
	return &d
}

func gogcText(percent int) string {
	if percent < 0 {
		return "off"
	}
	return strconv.Itoa(percent)
}

func memoryLimitText(limit int64) string {
	if limit <= 0 {
		return "none"
	}
	return strconv.FormatInt(limit>>20, 10) + " MiB"
}
