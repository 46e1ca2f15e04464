package catalogue

// CompileShards compiles the validator of tools' inputs in at most n
// shards, for the tests that hold a sharded validator to an unsharded one.
var CompileShards = compileShards
