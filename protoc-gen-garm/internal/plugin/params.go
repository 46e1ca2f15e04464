package plugin

import (
	"fmt"
	"regexp"
)

// Params are protoc-gen-garm's own parameters. protogen itself handles
// paths= and module=, as for protoc-gen-go.
type Params struct {
	// ContractVersion is stamped on every ToolRef and the package's
	// ContractVersion constant.
	ContractVersion string
	// Plans asks for the per-package plan file.
	Plans bool
}

// DefaultParams are the parameters when none are given.
func DefaultParams() Params { return Params{ContractVersion: "dev", Plans: true} }

var contractVersionPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$`)

// Set applies one name=value parameter; it has the signature protogen's
// ParamFunc wants. An unknown name is an error naming what is accepted.
func (p *Params) Set(name, value string) error {
	switch name {
	case "contract_version":
		if !contractVersionPattern.MatchString(value) {
			return fmt.Errorf("contract_version=%q: want letters, digits and . _ + - (at most 64, starting with a letter or digit)", value)
		}
		p.ContractVersion = value
	case "plans":
		switch value {
		case "true":
			p.Plans = true
		case "false":
			p.Plans = false
		default:
			return fmt.Errorf("plans=%q: want true or false", value)
		}
	default:
		return fmt.Errorf("unknown parameter %q: protoc-gen-garm takes paths, module, contract_version and plans", name)
	}
	return nil
}
