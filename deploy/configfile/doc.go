// Package configfile reads a command's YAML configuration file into its
// flag set: one key per flag, spelt as the flag is, so that the file and
// the command line can never disagree about what a setting is called.
//
// Precedence is fixed: a flag on the command line wins, then an
// environment variable, then the file, then the flag's default.
// Environment variables exist only for the paths of secrets' files (the
// caller names which); no secret is ever a value in the file, on the
// command line or in the environment. Parse reports every problem of the
// file at once — each unknown key named, each bad value with its line —
// so that the caller can add them to its own validation and report all in
// one go.
//
// Effective prints the configuration a flag set holds as a file Parse
// reads back, with the credentials a URL may carry elided.
package configfile
