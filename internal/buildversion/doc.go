// Package buildversion is how every garm command names its own version: the
// release stamped at link time, else the module version recorded in the
// binary, else "dev". Each command keeps its own stamped variable (the -X
// target of make install and make image) and asks Resolve for the rest.
package buildversion
