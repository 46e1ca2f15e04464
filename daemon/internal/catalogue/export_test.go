package catalogue

// CompileShards compiles the validator of tools' inputs in at most n
// shards, for the tests that hold a sharded validator to an unsharded one.
var CompileShards = compileShards

// ReusedFiles counts the descriptor files g's Reload took from the
// generation serving, for the tests that hold reuse to what the digests
// prove.
func ReusedFiles(g *Generation) int { return g.reusedFiles }
