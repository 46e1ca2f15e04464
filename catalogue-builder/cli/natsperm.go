package cli

import (
	"context"
	"fmt"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/natsperm"
)

func runNATSPermissions(_ context.Context, e *env, args []string) int {
	fs := e.flags("nats-permissions")
	format := fs.String("format", "conf", "conf (nats-server configuration: a permissions variable per user, for the authorization block) or json (the permissions of NATS user JWTs, for nsc or an auth callout)")
	withApprovals := fs.Bool("approvals", false, "also the approvals service's identity (garm-approvals), which needs no catalogue")
	pos, code := e.parse(fs, args, 1)
	if code >= 0 {
		return code
	}
	if *format != "conf" && *format != "json" {
		fmt.Fprintf(e.stderr, "%s nats-permissions: --format %q is neither conf nor json\n", e.prog, *format)
		return ExitUsage
	}
	a, err := artifact.ReadFile(pos[0])
	if err != nil {
		return e.refuse("nats-permissions", err)
	}
	set := natsperm.Derive(a)
	if *withApprovals {
		set.Identities = append(set.Identities, natsperm.Approvals())
	}
	if *format == "json" {
		err = natsperm.WriteJSON(e.stdout, set)
	} else {
		err = natsperm.WriteConf(e.stdout, set)
	}
	if err != nil {
		return e.refuse("nats-permissions", err)
	}
	return ExitOK
}
