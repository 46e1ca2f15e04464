// Package buildertest holds fixtures for tests and benchmarks of catalogue
// builds: contracts written as .proto sources, to be built by the catalogue
// builder and, downstream, loaded by garmd. Tests only: no program imports
// it.
//
// It exists so that the figures of the builder's own benchmarks and those of
// garmd's load benchmarks are taken over one contract, generated in one
// place, and so compare. It builds nothing itself and refuses nothing: a
// fixture that does not build fails the test that builds it.
package buildertest
