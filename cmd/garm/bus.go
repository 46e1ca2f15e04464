package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
	garmd "github.com/garm-dev/garm/daemon"
	"github.com/garm-dev/garm/ledger/sealer"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const busUsage = "init [--nats URL] [--nats-creds FILE | --nats-nkey FILE | --nats-user-file FILE] [--nats-tls-ca FILE] [--replicas N] [--grants-ttl D] [--approvals] [--ledger-heads]"

// busOptions are garm bus init's flags: the bus as garmd reaches it (the
// same connection flags), and what to create.
type busOptions struct {
	bus              garmtool.BusFlags
	replicas         int
	grantsTTL        time.Duration
	approvals, heads bool
}

// runBus is garm bus: today only init.
func runBus(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "init" {
		fmt.Fprintln(stderr, "usage: garm bus "+busUsage+"\n\n"+
			"  init  create every stream and bucket garmd needs, fenced, or check and fence those that exist")
		return exitUsage
	}
	fs := flag.NewFlagSet("garm bus init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o busOptions
	o.bus.URL = os.Getenv("GARM_NATS")
	o.bus.Register(fs)
	fs.IntVar(&o.replicas, "replicas", 1, "how many copies JetStream keeps of each stream and bucket it creates (`n`, 3 on a cluster)")
	fs.DurationVar(&o.grantsTTL, "grants-ttl", 0, "how long a new spent-grant bucket keeps a spent grant (0: for ever); at least the longest max_grant_age_seconds plus 60s")
	fs.BoolVar(&o.approvals, "approvals", false, "also the approvals bucket "+pending.Bucket+" (garmd --approvals)")
	fs.BoolVar(&o.heads, "ledger-heads", false, "also the sealer's head stream "+sealer.HeadStream)
	if err := fs.Parse(args[1:]); errors.Is(err, flag.ErrHelp) {
		return exitOK
	} else if err != nil {
		return exitUsage
	}
	opts, err := o.bus.ConnectOptions()
	var problems []string
	if err != nil {
		problems = append(problems, oneLine(err))
	}
	if o.replicas < 1 || o.replicas > 5 {
		problems = append(problems, fmt.Sprintf("--replicas is %d; JetStream keeps 1 to 5 copies", o.replicas))
	}
	if o.grantsTTL < 0 {
		problems = append(problems, "--grants-ttl must not be negative")
	}
	if len(problems) > 0 || fs.NArg() > 0 {
		for _, p := range problems {
			fmt.Fprintln(stderr, "garm bus init:", p)
		}
		fmt.Fprintln(stderr, "usage: garm bus "+busUsage)
		return exitUsage
	}
	nc, err := nats.Connect(o.bus.URL, append(opts, nats.Name("garm bus init"))...)
	if err != nil {
		fmt.Fprintf(stderr, "garm bus init: connecting to %s: %v\n", o.bus.URL, err)
		return exitFailed
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		fmt.Fprintln(stderr, "garm bus init:", err)
		return exitFailed
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if !busInit(ctx, js, o, stdout) {
		return exitFailed
	}
	return exitOK
}

// busInit brings every object o names to what garmd needs, writing one
// line per object, and says whether all of them are.
func busInit(ctx context.Context, js jetstream.JetStream, o busOptions, w io.Writer) bool {
	type object struct {
		name string
		make func() (string, error)
	}
	checks := func() map[string]error { return garmd.CheckBus(ctx, js) }
	var objects []object
	for _, cfg := range garmd.WriteStreams(o.replicas) {
		objects = append(objects, object{cfg.Name, func() (string, error) { return ensureStream(ctx, js, cfg, checks) }})
	}
	objects = append(objects, []object{
		{wire.GrantsSpentBucket, func() (string, error) { return ensureGrants(ctx, js, o, checks) }},
		{garmd.LimitStreams, func() (string, error) { return ensureLimits(ctx, js, o.replicas, checks) }},
		{wire.CatalogueVersionsBucket, func() (string, error) { return ensureCatalogueVersions(ctx, js, o.replicas, checks) }},
	}...)
	if o.approvals {
		objects = append(objects, object{pending.Bucket, func() (string, error) { return ensureApprovals(ctx, js, o.replicas) }})
	}
	if o.heads {
		objects = append(objects, object{sealer.HeadStream, func() (string, error) { return ensureHeads(ctx, js, o.replicas) }})
	}
	ok := true
	for _, obj := range objects {
		state, err := obj.make()
		if err != nil {
			ok = false
			fmt.Fprintf(w, "%-18s NOT READY: %v\n", obj.name, oneLine(err))
			continue
		}
		fmt.Fprintf(w, "%-18s %s\n", obj.name, state)
	}
	return ok
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

// ensureStream creates cfg's stream when it is missing; one that exists is
// left as it is. Either way garmd's own check must accept it: an existing
// stream it refuses is reported with the fix the check names.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig, checks func() map[string]error) (string, error) {
	state, err := createStream(ctx, js, cfg)
	if err != nil {
		return "", err
	}
	if err := checks()[cfg.Name]; err != nil {
		return "", err
	}
	return state, nil
}

// ensureLimits creates each counter stream garmd --limits counts on that is
// missing (limit.Streams): "created" when any was, "ok" when all were there;
// garmd's own check must accept them all.
func ensureLimits(ctx context.Context, js jetstream.JetStream, replicas int, checks func() map[string]error) (string, error) {
	state := "ok"
	for _, cfg := range garmd.LimitStreamConfigs(replicas) {
		got, err := createStream(ctx, js, cfg)
		if err != nil {
			return "", err
		}
		if !strings.HasPrefix(got, "ok") || state == "ok" {
			state = got
		}
	}
	if err := checks()[garmd.LimitStreams]; err != nil {
		return "", err
	}
	return state, nil
}

// createStream creates cfg's stream unless it exists: "created", or "ok"
// and a note when it keeps another number of copies than asked.
func createStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (string, error) {
	s, err := js.Stream(ctx, cfg.Name)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		if _, err := js.CreateStream(ctx, cfg); err != nil {
			return "", fmt.Errorf("creating stream %s: %w", cfg.Name, err)
		}
		return fmt.Sprintf("created (replicas %d)", cfg.Replicas), nil
	case err != nil:
		return "", fmt.Errorf("looking up stream %s: %w", cfg.Name, err)
	}
	return "ok" + replicasNote(s.CachedInfo().Config, cfg.Replicas), nil
}

// replicasNote names the fix when an existing stream keeps other than the
// asked number of copies; bus init changes no replica count itself.
func replicasNote(have jetstream.StreamConfig, want int) string {
	if have.Replicas == want || (have.Replicas == 0 && want == 1) {
		return ""
	}
	return fmt.Sprintf(" (keeps %d copies, not %d: nats stream edit %s --replicas %d)", have.Replicas, want, have.Name, want)
}

// ensureGrants creates the spent-grant bucket fenced, or fences an
// unfenced one when that drops no record: the fence keeps one record per
// key, so a bucket with a key holding more is refused with the command.
func ensureGrants(ctx context.Context, js jetstream.JetStream, o busOptions, checks func() map[string]error) (string, error) {
	const bucket = wire.GrantsSpentBucket
	_, err := js.KeyValue(ctx, bucket)
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound):
		if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: bucket, TTL: o.grantsTTL, Storage: jetstream.FileStorage, Replicas: o.replicas,
		}); err != nil {
			return "", fmt.Errorf("creating bucket %s: %w", bucket, err)
		}
		if err := garmd.FenceGrantsBucket(ctx, js); err != nil {
			return "", err
		}
		if err := checks()[bucket]; err != nil {
			return "", err
		}
		return fmt.Sprintf("created, fenced (replicas %d, keeps spent grants %s)", o.replicas, keeps(o.grantsTTL)), nil
	case err != nil:
		return "", fmt.Errorf("looking up bucket %s: %w", bucket, err)
	}
	s, err := js.Stream(ctx, "KV_"+bucket)
	if err != nil {
		return "", fmt.Errorf("looking up bucket %s: %w", bucket, err)
	}
	info := s.CachedInfo()
	note := replicasNote(info.Config, o.replicas)
	if checks()[bucket] == nil {
		return "ok" + note, nil
	}
	if info.Config.MaxMsgsPerSubject != 1 && info.State.Msgs > info.State.NumSubjects {
		return "", fmt.Errorf("not fenced, and fencing it would drop %d older records of its keys (the fence keeps one per key); "+
			"keep what you need, then fence it with %s", info.State.Msgs-info.State.NumSubjects, garmd.FenceGrantsBucketCommand())
	}
	if err := garmd.FenceGrantsBucket(ctx, js); err != nil {
		return "", err
	}
	if err := checks()[bucket]; err != nil {
		return "", err
	}
	return "fenced" + note, nil
}

func keeps(ttl time.Duration) string {
	if ttl == 0 {
		return "for ever"
	}
	return "for " + ttl.String()
}

// ensureCatalogueVersions creates the catalogue versions bucket fenced, or
// fences it: its fence (no purge, roll-up or delete) drops nothing.
func ensureCatalogueVersions(ctx context.Context, js jetstream.JetStream, replicas int, checks func() map[string]error) (string, error) {
	const bucket = wire.CatalogueVersionsBucket
	_, err := js.KeyValue(ctx, bucket)
	created := errors.Is(err, jetstream.ErrBucketNotFound)
	if err != nil && !created {
		return "", fmt.Errorf("looking up bucket %s: %w", bucket, err)
	}
	before := checks()[bucket]
	if err := garmd.EnsureCatalogueVersionsBucket(ctx, js, replicas); err != nil {
		return "", err
	}
	if err := checks()[bucket]; err != nil {
		return "", err
	}
	s, err := js.Stream(ctx, "KV_"+bucket)
	if err != nil {
		return "", fmt.Errorf("looking up bucket %s: %w", bucket, err)
	}
	note := replicasNote(s.CachedInfo().Config, replicas)
	switch {
	case created:
		return fmt.Sprintf("created, fenced (replicas %d)", replicas), nil
	case before != nil:
		return "fenced" + note, nil
	}
	return "ok" + note, nil
}

// ensureApprovals creates the approvals bucket fenced, or fences it: its
// fence (per-key TTLs, no purge, roll-up or delete) drops nothing.
func ensureApprovals(ctx context.Context, js jetstream.JetStream, replicas int) (string, error) {
	_, err := js.KeyValue(ctx, pending.Bucket)
	created := errors.Is(err, jetstream.ErrBucketNotFound)
	if err != nil && !created {
		return "", fmt.Errorf("looking up bucket %s: %w", pending.Bucket, err)
	}
	if !created {
		if _, err := pending.Open(ctx, js); err == nil {
			return "ok", nil
		}
	}
	if _, err := pending.Ensure(ctx, js, replicas); err != nil {
		return "", err
	}
	if created {
		return fmt.Sprintf("created, fenced (replicas %d)", replicas), nil
	}
	return "fenced", nil
}

// ensureHeads creates the sealer's head stream fenced, or fences it: the
// fence (no delete, purge or roll-up, no limits) drops nothing.
func ensureHeads(ctx context.Context, js jetstream.JetStream, replicas int) (string, error) {
	state, err := createStream(ctx, js, sealer.HeadStreamConfig(replicas))
	if err != nil {
		return "", err
	}
	if sealer.CheckHeadStream(ctx, js) == nil {
		return state, nil
	}
	s, err := js.Stream(ctx, sealer.HeadStream)
	if err != nil {
		return "", fmt.Errorf("looking up stream %s: %w", sealer.HeadStream, err)
	}
	cfg := s.CachedInfo().Config
	cfg.DenyDelete, cfg.DenyPurge, cfg.AllowRollup = true, true, false
	cfg.MaxAge, cfg.MaxMsgs, cfg.MaxBytes, cfg.MaxMsgsPerSubject = 0, -1, -1, -1
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return "", fmt.Errorf("fencing stream %s: %w", sealer.HeadStream, err)
	}
	if err := sealer.CheckHeadStream(ctx, js); err != nil {
		return "", err
	}
	return "fenced" + replicasNote(cfg, replicas), nil
}
