package minter

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Version is the suite file format this kit reads.
const Version = 1

// The minter shapes a suite can be driven against.
const (
	// ShapeGet is the dev identity provider's: a token is GET TokenPath with
	// the case's mint values as the query, a grant is a POST of them as JSON
	// to GrantPath (devkit/idp).
	ShapeGet = "get"
	// ShapeFormPost is a security token service's token endpoint: a POST of
	// the case's mint values as a form, the client authenticated by a
	// private-key JWT (RFC 7523 section 2.2), answering OAuth's JSON.
	ShapeFormPost = "form-post"
	// ShapeApprovals is the approvals service: a grant is a request recorded
	// as garmd records it and approved by an approver through the service's
	// pages. Its driver is the kit's test entry point's (decision 0107).
	ShapeApprovals = "approvals"
)

// The four kinds of case; each asserts exactly one thing.
const (
	// KindToken: the minted token verifies, with garmd's token verifier,
	// into a principal with the case's claims.
	KindToken = "token"
	// KindTokenRefused: the minter refuses the mint request (a 4xx).
	KindTokenRefused = "token-refused"
	// KindGrant: the minted grant verifies, with garmd's grant verifier, for
	// the case's tool, caller and material.
	KindGrant = "grant"
	// KindGrantRefused: the minter refuses the grant mint (a 4xx).
	KindGrantRefused = "grant-refused"
)

// Suite is one suite file: what is trusted and the cases.
type Suite struct {
	// Name names the suite in the report.
	Name    string `yaml:"suite"`
	Version int    `yaml:"version"`
	// Shape is the minter's shape: ShapeGet, ShapeFormPost or ShapeApprovals.
	Shape string `yaml:"shape"`
	// Token is how garmd is configured to verify tokens; required when a
	// case is a token case.
	Token *Trust `yaml:"token"`
	// Grant is how garmd is configured to verify grants; required when a
	// case is a grant case.
	Grant *Trust `yaml:"grant"`
	Cases []Case `yaml:"cases"`
}

// Trust is garmd's configuration for one kind of credential: the exact
// issuer, its key set and the audience. "{endpoint}" in Issuer or JWKS is
// the endpoint the run is given, and "{name}" any other of Config.Vars.
type Trust struct {
	Issuer   string `yaml:"issuer"`
	JWKS     string `yaml:"jwks"`
	Audience string `yaml:"audience"`
	// Compartments are the compartments the catalogue declares, for a token
	// case: garmd drops any other a token names.
	Compartments []string `yaml:"compartments"`
}

// Case is one case: what is sent, and the one thing expected.
type Case struct {
	Name string `yaml:"name"`
	Kind string `yaml:"kind"`
	// Mint is what is sent: the query (ShapeGet tokens), the JSON body
	// (ShapeGet grants), the form (ShapeFormPost), or the approver
	// (ShapeApprovals: "approver", a persona).
	Mint map[string]any `yaml:"mint"`
	// ClientAuth is how a ShapeFormPost case authenticates its client:
	// ClientAuthValid when empty.
	ClientAuth string `yaml:"client_auth"`
	// Claims is what a KindToken case's principal must hold.
	Claims *Claims `yaml:"claims"`
	// For is what a KindGrant case's grant must verify for; for
	// ShapeApprovals, also the request recorded.
	For *GrantFor `yaml:"for"`
	// Status, when set, is the exact status a refusal must carry.
	Status int `yaml:"status"`
}

// The ways a ShapeFormPost case can authenticate its client.
const (
	ClientAuthValid = "valid"
	// ClientAuthNone sends no client assertion.
	ClientAuthNone = "none"
	// ClientAuthForeignKey signs the assertion with a key the STS does not
	// know for the client.
	ClientAuthForeignKey = "foreign-key"
	// ClientAuthExpired sends an assertion that expired a minute ago.
	ClientAuthExpired = "expired"
	// ClientAuthWrongAudience sends an assertion for another endpoint.
	ClientAuthWrongAudience = "wrong-audience"
)

var clientAuths = []string{"", ClientAuthValid, ClientAuthNone, ClientAuthForeignKey, ClientAuthExpired, ClientAuthWrongAudience}

// Claims is what a verified principal must hold. Only what is stated is
// compared; an empty list stated as [] is compared as empty.
type Claims struct {
	Subject      string   `yaml:"subject"`
	Kind         string   `yaml:"kind"`
	Tenant       *string  `yaml:"tenant"`
	Clearance    string   `yaml:"clearance"`
	Compartments []string `yaml:"compartments"`
	Verbs        []string `yaml:"verbs"`
	// Scoped, when stated, is whether the token names tool sets at all.
	Scoped   *bool    `yaml:"scoped"`
	ToolSets []string `yaml:"tool_sets"`
	// Act is the delegation chain's subjects, outermost first.
	Act []string `yaml:"act"`
	// Exec is the executing runner's subject.
	Exec *string `yaml:"exec"`
}

// GrantFor is the call a grant must verify for: the tool and its approval
// policy, the caller and the values of the request's material fields.
type GrantFor struct {
	Tool    string   `yaml:"tool"`
	Subject string   `yaml:"subject"`
	Tenant  string   `yaml:"tenant"`
	Act     []string `yaml:"act"`
	// Material is the request's value of each material field, by field
	// name; the tool's material_fields are its keys. Names are top-level
	// string fields of the request (no dots); wire.Unset stands for a field
	// the request leaves unset.
	Material map[string]string `yaml:"material"`
	Policy   Policy            `yaml:"policy"`
}

// Policy is the tool's approval policy (garm.tool.v1.ToolPolicy.Approval)
// but its mode, which is MODE_GRANT, and its material_fields.
// MaxGrantAgeSeconds and ApproverMinClearance are required, as garmd's
// catalogue requires them of a MODE_GRANT tool.
type Policy struct {
	MaxGrantAgeSeconds   uint32   `yaml:"max_grant_age_seconds"`
	ApproverMinClearance string   `yaml:"approver_min_clearance"`
	ApproverCompartments []string `yaml:"approver_compartments"`
	DistinctApprover     bool     `yaml:"distinct_approver"`
}

// LoadSuite reads and checks the suite file at path.
func LoadSuite(path string) (*Suite, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseSuite(b)
}

// ParseSuite reads a suite strictly (an unknown key is an error) and checks
// it, reporting every problem at once.
func ParseSuite(b []byte) (*Suite, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var s Suite
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("minter: suite: %w", err)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Validate reports every problem with the suite at once. A suite with no
// case is a problem: a run with nothing to check must not report ok.
func (s *Suite) Validate() error {
	var problems []string
	report := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if s.Name == "" {
		report("no suite name")
	}
	if s.Version != Version {
		report("version %d: this kit reads version %d", s.Version, Version)
	}
	if !slices.Contains([]string{ShapeGet, ShapeFormPost, ShapeApprovals}, s.Shape) {
		report("shape %q: want %s, %s or %s", s.Shape, ShapeGet, ShapeFormPost, ShapeApprovals)
	}
	if len(s.Cases) == 0 {
		report("no cases: a run with nothing to check cannot pass")
	}
	seen := map[string]bool{}
	for i, c := range s.Cases {
		at := fmt.Sprintf("case %d (%q)", i+1, c.Name)
		if c.Name == "" {
			report("case %d has no name", i+1)
		} else if seen[c.Name] {
			report("%s: the name is used twice", at)
		}
		seen[c.Name] = true
		for _, p := range c.problems(s) {
			report("%s: %s", at, p)
		}
	}
	if len(problems) > 0 {
		return errors.New("minter: suite: " + strings.Join(problems, "; "))
	}
	return nil
}

func (c *Case) problems(s *Suite) []string {
	var out []string
	switch c.Kind {
	case KindToken, KindTokenRefused:
		if s.Shape == ShapeApprovals {
			out = append(out, "the approvals service mints grants, not tokens")
		}
		if c.Kind == KindToken && s.Token == nil {
			out = append(out, "a token case needs the suite's token trust")
		}
		if c.Kind == KindToken && (c.Claims == nil || c.Claims.Subject == "") {
			out = append(out, "a token case needs claims with a subject")
		}
	case KindGrant, KindGrantRefused:
		if s.Shape == ShapeFormPost {
			out = append(out, "the form-post shape mints tokens, not grants")
		}
		if c.Kind == KindGrant && s.Grant == nil {
			out = append(out, "a grant case needs the suite's grant trust")
		}
		if c.For == nil && (c.Kind == KindGrant || s.Shape == ShapeApprovals) {
			out = append(out, "a grant case needs for: the tool, caller and material")
		}
		if c.For != nil {
			if c.For.Tool == "" || c.For.Subject == "" {
				out = append(out, "for needs a tool and a subject")
			}
			// garmd's catalogue refuses a MODE_GRANT tool without either.
			if c.For.Policy.MaxGrantAgeSeconds == 0 || c.For.Policy.ApproverMinClearance == "" {
				out = append(out, "for.policy needs max_grant_age_seconds and approver_min_clearance, as garmd's catalogue does")
			}
			for name := range c.For.Material {
				if name == "" || strings.Contains(name, ".") {
					out = append(out, fmt.Sprintf("material field %q is not a top-level field name", name))
				}
			}
		}
	default:
		out = append(out, fmt.Sprintf("kind %q: want %s, %s, %s or %s", c.Kind, KindToken, KindTokenRefused, KindGrant, KindGrantRefused))
	}
	if c.Kind != KindToken && c.Claims != nil {
		out = append(out, "claims belong to a token case")
	}
	if (c.Kind == KindToken || c.Kind == KindGrant) && c.Status != 0 {
		out = append(out, "status belongs to a refusal case")
	}
	if c.Status != 0 && (c.Status < 400 || c.Status > 499) {
		out = append(out, fmt.Sprintf("status %d is not a refusal (4xx)", c.Status))
	}
	if !slices.Contains(clientAuths, c.ClientAuth) {
		out = append(out, fmt.Sprintf("client_auth %q is unknown", c.ClientAuth))
	} else if c.ClientAuth != "" && s.Shape != ShapeFormPost {
		out = append(out, "client_auth belongs to the form-post shape")
	}
	return out
}
