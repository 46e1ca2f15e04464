package catalogue

import (
	"errors"
	"fmt"

	"buf.build/go/protovalidate"
	"github.com/garm-dev/garm/daemon/internal/call"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Validator is the generation's protovalidate validator over every tool's
// input (chain step 3b), compiled by Mount; nil before Mount accepted the
// generation, which then must not serve.
func (g *Generation) Validator() protovalidate.Validator { return g.validator }

// compileValidator builds one validator for every tool input, lazy
// compilation off, so a message the validator was not built for is refused
// rather than compiled during a call. protovalidate keeps a rule that does
// not compile as an error it returns on every validation of that message,
// so each input is validated once, empty, and a compilation error refuses
// the catalogue naming the tool (every such tool, not just the first); any
// other outcome of that one validation (valid, violations, a runtime error)
// is the empty message's business.
func compileValidator(tools []*call.Tool) (protovalidate.Validator, []string) {
	inputs := make([]protoreflect.MessageDescriptor, 0, len(tools))
	seen := make(map[protoreflect.FullName]bool, len(tools))
	for _, t := range tools {
		if !seen[t.Input.FullName()] {
			seen[t.Input.FullName()] = true
			inputs = append(inputs, t.Input)
		}
	}
	v, err := protovalidate.New(protovalidate.WithMessageDescriptors(inputs...), protovalidate.WithDisableLazy())
	if err != nil {
		return nil, []string{fmt.Sprintf("the tools' validation rules do not compile: %v", err)}
	}
	var problems []string
	for _, t := range tools {
		var compile *protovalidate.CompilationError
		if err := v.Validate(dynamicpb.NewMessage(t.Input)); errors.As(err, &compile) {
			problems = append(problems, fmt.Sprintf("tool %s has validation rules on %s that do not compile: %v", t.FQN, t.Input.FullName(), compile))
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return v, nil
}
