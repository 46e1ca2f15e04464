package devplane

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/natsperm"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// Bus identities of the dev plane besides those the catalogue implies
// (garmd, one per tool package).
const (
	// OperatorIdentity is the stack itself acting as the bus's operator:
	// it creates the streams and the bucket, and tails the ledger. It is
	// the one identity with every right, as an operator's tooling would
	// be, and nothing in garm's path uses it.
	OperatorIdentity = "devplane"
	// AgentIdentity is a client with no right on the bus: what an agent,
	// or anything that is neither garmd nor a tool, gets.
	AgentIdentity = "agent"
)

// identities are the dev plane's users on the bus: an nkey each, its seed
// in a file only its owner reads, with the permissions garm-catalogue
// nats-permissions derives from the catalogue (decision 0040).
type identities struct {
	dir   string
	perms *natsperm.Set
	// seeds maps an identity's name to its seed file.
	seeds map[string]string
	// public maps an identity's name to its public key.
	public map[string]string
	users  []*server.NkeyUser
}

// newIdentities makes an nkey for garmd, each tool package of a, the
// operator and the agent, writing the seeds under dir.
func newIdentities(a *artifact.Artifact, dir string) (*identities, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ids := &identities{dir: dir, seeds: map[string]string{}, public: map[string]string{}}
	if err := ids.derive(a); err != nil {
		return nil, err
	}
	return ids, nil
}

// derive sets every identity's permissions to those a implies, making an
// nkey for each identity that has none yet (a tool package new to the
// catalogue). Identities a no longer implies keep their keys and lose
// every right.
func (ids *identities) derive(a *artifact.Artifact) error {
	ids.perms = natsperm.Derive(a)
	ids.users = nil
	granted := map[string]bool{}
	for _, id := range ids.perms.Identities {
		if err := ids.add(id.Name, serverPermissions(id.Permissions)); err != nil {
			return err
		}
		granted[id.Name] = true
	}
	// The approvals service needs no catalogue, so it is not in the derived set.
	approvals := natsperm.Approvals()
	if err := ids.add(approvals.Name, serverPermissions(approvals.Permissions)); err != nil {
		return err
	}
	granted[approvals.Name] = true
	if err := ids.add(OperatorIdentity, nil); err != nil {
		return err
	}
	if err := ids.add(AgentIdentity, serverPermissions(ids.perms.EveryoneElse)); err != nil {
		return err
	}
	for _, name := range ids.names() {
		if !granted[name] && name != OperatorIdentity && name != AgentIdentity {
			ids.users = append(ids.users, &server.NkeyUser{Nkey: ids.public[name], Permissions: serverPermissions(ids.perms.EveryoneElse)})
		}
	}
	return nil
}

// add admits name with perms, making its nkey and seed file the first
// time.
func (ids *identities) add(name string, perms *server.Permissions) error {
	if public, ok := ids.public[name]; ok {
		ids.users = append(ids.users, &server.NkeyUser{Nkey: public, Permissions: perms})
		return nil
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return err
	}
	seed, err := kp.Seed()
	if err != nil {
		return err
	}
	public, err := kp.PublicKey()
	if err != nil {
		return err
	}
	path := filepath.Join(ids.dir, name+".nk")
	if err := os.WriteFile(path, append(seed, '\n'), 0o600); err != nil {
		return err
	}
	ids.seeds[name] = path
	ids.public[name] = public
	ids.users = append(ids.users, &server.NkeyUser{Nkey: public, Permissions: perms})
	return nil
}

// seed is the seed file of the named identity.
func (ids *identities) seed(name string) (string, error) {
	path, ok := ids.seeds[name]
	if !ok {
		return "", fmt.Errorf("the bus has no identity %q (it has %v)", name, ids.names())
	}
	return path, nil
}

func (ids *identities) names() []string {
	var names []string
	for name := range ids.seeds {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// serverPermissions is p as the embedded server takes it.
func serverPermissions(p natsperm.Permissions) *server.Permissions {
	rules := func(r natsperm.Rules) *server.SubjectPermission {
		return &server.SubjectPermission{Allow: slices.Clone(r.Allow), Deny: slices.Clone(r.Deny)}
	}
	out := &server.Permissions{Publish: rules(p.Publish), Subscribe: rules(p.Subscribe)}
	if p.Responses {
		out.Response = &server.ResponsePermission{MaxMsgs: natsperm.ResponsesMax}
	}
	return out
}
