package instance

// Parsed is how many rule texts r's environment keeps parsed.
func (r *Rules) Parsed() int { return r.env.Parsed() }
