package garmd

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/garm-dev/garm/catalogue-builder/signature"
	"github.com/garm-dev/garm/daemon/internal/catalogue/signed"
)

// CatalogueSigning is how garmd checks the catalogue's signatures
// (docs/decisions/0135).
type CatalogueSigning struct {
	// CatalogueKeys turns verification on (--catalogue-keys): the catalogue
	// key set, a JWKS file or an https URL (http only to a loopback host),
	// read afresh for every catalogue considered. Empty verifies nothing.
	CatalogueKeys string
	// CatalogueName, when set, is the only catalogue name garmd serves
	// (--catalogue-name); empty serves the name signed on the catalogue it
	// starts on and pins it for every reload.
	CatalogueName string
	// CatalogueMinSigners is how many distinct keys must have signed
	// (--catalogue-min-signers); 0 means 1.
	CatalogueMinSigners int
	// CatalogueMinPerGroup is how many distinct keys of each group must
	// have signed (--catalogue-min-signers-group owners=1,security=1).
	CatalogueMinPerGroup GroupMinimums
	// CatalogueAllowRollbackTo allows serving, once, this version lower
	// than the highest served (--catalogue-allow-rollback-to); the bus
	// records the rollback as made. 0 allows none.
	CatalogueAllowRollbackTo uint64
}

// Signing reports whether garmd verifies the catalogue's signatures.
func (c Config) Signing() bool { return c.CatalogueKeys != "" }

// policy is the signer policy the flags set.
func (c Config) policy() signature.Policy {
	return signature.Policy{MinSigners: c.CatalogueMinSigners, MinPerGroup: c.CatalogueMinPerGroup}
}

func (c Config) signingProblems() []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if c.CatalogueKeys == "" {
		for _, f := range []struct {
			given bool
			flag  string
		}{
			{c.CatalogueMinSigners != 0, "--catalogue-min-signers"},
			{len(c.CatalogueMinPerGroup) > 0, "--catalogue-min-signers-group"},
			{c.CatalogueAllowRollbackTo != 0, "--catalogue-allow-rollback-to"},
			{c.CatalogueName != "", "--catalogue-name"},
		} {
			if f.given {
				add("%s is given without --catalogue-keys: signatures are checked only when the catalogue key set is named", f.flag)
			}
		}
		return problems
	}
	if signed.IsURL(c.CatalogueKeys) {
		if err := checkJWKSURL(c.CatalogueKeys); err != nil {
			add("--catalogue-keys %q: %v", c.CatalogueKeys, err)
		}
	} else if info, err := os.Stat(c.CatalogueKeys); err != nil {
		add("--catalogue-keys: %v", err)
	} else if !info.Mode().IsRegular() {
		add("--catalogue-keys %s is not a file", c.CatalogueKeys)
	}
	// The key set is not read here: whether the policy can be met with it
	// is checked each time it is read.
	if err := c.policy().Validate(nil); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			add("--catalogue-min-signers, --catalogue-min-signers-group: %s", line)
		}
	}
	return problems
}

// GroupMinimums are the least numbers of distinct signers per key group, a
// flag.Value spelled "owners=1,security=1".
type GroupMinimums map[string]int

var groupName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

func (g GroupMinimums) String() string {
	names := make([]string, 0, len(g))
	for name := range g {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = name + "=" + strconv.Itoa(g[name])
	}
	return strings.Join(parts, ",")
}

// Set reads "group=n[,group=n…]"; given again, it adds to what was given.
func (g *GroupMinimums) Set(v string) error {
	if *g == nil {
		*g = GroupMinimums{}
	}
	for _, part := range strings.Split(v, ",") {
		name, count, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.Atoi(count)
		switch {
		case !ok || err != nil:
			return fmt.Errorf("%q is not group=count", part)
		case !groupName.MatchString(name):
			return fmt.Errorf("group %q is not 1 to 64 lowercase letters, digits, '_' or '-'", name)
		case n < 1:
			return fmt.Errorf("group %s: a minimum of %d signers", name, n)
		}
		(*g)[name] = n
	}
	return nil
}
