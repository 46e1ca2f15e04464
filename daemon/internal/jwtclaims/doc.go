// Package jwtclaims reads the claims of a verified JWS payload strictly, the
// one way both steps that take one — step 1's tokens and step 5's grants —
// read them: every claim must have exactly the JSON type it is given (null
// is no string, a string is no date), dates are JWT NumericDates within
// year 9999, and enum names (a clearance) are read bare or prefixed, in any
// ASCII case, never through Unicode case mapping.
//
// It verifies nothing: signatures and key sets are the keyset package's,
// and which claims a step requires, and what they must say, are the step's.
package jwtclaims
