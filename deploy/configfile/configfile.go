package configfile

import (
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ConfigFlag is the flag that names the configuration file.
const ConfigFlag = "config"

// Lister is a flag.Value that holds a list: in a file it is a YAML
// sequence, one Set per element.
type Lister interface {
	flag.Value
	Values() []string
}

// Parse parses args into fs, then fills every flag the command line did not
// set from env (an environment variable's name to the flag it sets, read
// with getenv) and then from the file named by --config, which Parse
// defines on fs. It returns the problems of the file and the environment,
// each a line; err is the command line's own error (flag.ErrHelp
// included), after which nothing else is read.
func Parse(fs *flag.FlagSet, args []string, env map[string]string, getenv func(string) string) (problems []string, err error) {
	path := fs.String(ConfigFlag, "", "a YAML `file` whose keys are these flags' names; flags given here override it")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })

	fromEnv := map[string]bool{}
	names := make([]string, 0, len(env))
	for name := range env {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		target := env[name]
		v := getenv(name)
		if v == "" || given[target] {
			continue
		}
		if fs.Lookup(target) == nil {
			problems = append(problems, fmt.Sprintf("environment variable %s names no flag %q", name, target))
			continue
		}
		if err := fs.Set(target, v); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", name, err))
		}
		fromEnv[target] = true
	}
	if *path == "" {
		return problems, nil
	}
	data, err := os.ReadFile(*path)
	if err != nil {
		return append(problems, fmt.Sprintf("--%s: %v", ConfigFlag, err)), nil
	}
	skip := func(name string) bool { return given[name] || fromEnv[name] }
	return append(problems, apply(fs, *path, data, skip)...), nil
}

// apply sets fs's flags from the YAML mapping in data, except those skip
// names, and returns every problem.
func apply(fs *flag.FlagSet, path string, data []byte, skip func(string) bool) []string {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return []string{fmt.Sprintf("%s: %v", path, err)}
	}
	if len(doc.Content) == 0 {
		return nil // an empty file sets nothing
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return []string{fmt.Sprintf("%s:%d: the file is a mapping of flag names to values", path, top.Line)}
	}
	var problems []string
	add := func(n *yaml.Node, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s:%d: ", path, n.Line)+fmt.Sprintf(format, args...))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		name := k.Value
		f := fs.Lookup(name)
		switch {
		case k.Kind != yaml.ScalarNode:
			add(k, "a key is a flag's name")
			continue
		case f == nil || name == ConfigFlag:
			add(k, "unknown key %q: no such flag", name)
			continue
		case seen[name]:
			add(k, "%q is given twice", name)
			continue
		}
		seen[name] = true
		if skip(name) {
			continue
		}
		_, isList := f.Value.(Lister)
		switch {
		case v.Kind == yaml.ScalarNode && v.Tag == "!!null":
			add(v, "%s has no value", name)
		case v.Kind == yaml.ScalarNode:
			if err := fs.Set(name, v.Value); err != nil {
				add(v, "%s: %v", name, err)
			}
		case v.Kind == yaml.SequenceNode && isList:
			for _, e := range v.Content {
				if e.Kind != yaml.ScalarNode {
					add(e, "%s: each element is a plain value", name)
				} else if err := fs.Set(name, e.Value); err != nil {
					add(e, "%s: %v", name, err)
				}
			}
		case isList:
			add(v, "%s is a list or a plain value", name)
		default:
			add(v, "%s is a plain value", name)
		}
	}
	return problems
}

// Effective writes the configuration fs holds as YAML that Parse reads
// back, every flag but --config and those in omit, in the flag set's order;
// a URL's user information (a password, a token) is elided.
func Effective(w io.Writer, fs *flag.FlagSet, omit ...string) error {
	top := &yaml.Node{Kind: yaml.MappingNode}
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == ConfigFlag || slices.Contains(omit, f.Name) {
			return
		}
		key := &yaml.Node{Kind: yaml.ScalarNode, Value: f.Name}
		var value *yaml.Node
		if l, ok := f.Value.(Lister); ok {
			value = &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, v := range l.Values() {
				value.Content = append(value.Content, scalar(ElideURLCredentials(v)))
			}
		} else {
			v := f.Value.String()
			g, isGetter := f.Value.(flag.Getter)
			if v == "" && !isGetter {
				return // an optional value left unset: absent, as in a file
			}
			value = scalar(ElideURLCredentials(v))
			if isGetter {
				switch g.Get().(type) {
				case bool, int, int64, uint, uint64, float64:
					value.Tag = "" // a YAML bool or number, unquoted
				}
			}
		}
		top.Content = append(top.Content, key, value)
	})
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{top}}); err != nil {
		return err
	}
	return enc.Close()
}

func scalar(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
}

// ElideURLCredentials replaces the user information of each URL in v (one,
// or a comma-separated list) with "REDACTED": a NATS URL may carry a user
// and password or a token there.
func ElideURLCredentials(v string) string {
	if !strings.Contains(v, "@") {
		return v
	}
	parts := strings.Split(v, ",")
	for i, p := range parts {
		u, err := url.Parse(strings.TrimSpace(p))
		if err != nil || u.User == nil {
			if err != nil && strings.Contains(p, "://") {
				parts[i] = "REDACTED" // a URL too broken to parse may still hold a secret
			}
			continue
		}
		u.User = url.User("REDACTED")
		parts[i] = u.String()
	}
	return strings.Join(parts, ",")
}
