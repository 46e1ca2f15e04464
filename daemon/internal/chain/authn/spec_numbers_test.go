package authn

import "time"

// design 7.5's numbers, written as the specification writes them: a test that
// read them from the code it checks could not notice the code drifting from
// the specification.
const (
	specSkew               = 60 * time.Second
	specKeySetTTL          = 10 * time.Minute
	specUnknownKidInterval = time.Minute
)
