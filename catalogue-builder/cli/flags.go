package cli

import "flag"

// flagSetWith is a flag set that also holds an output path and can tell
// whether a flag was given.
type flagSetWith struct {
	*flag.FlagSet
	output string
}

func (fs *flagSetWith) isSet(name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
