// Package ledger is chain step 9: it mints the call's event id, opens the
// row at the chain's entry (outcome "denied" until something better is
// known), fills the columns as the call learns them, and completes the row
// when the call ends, on every path (design 3.7, 7.4).
//
// Recording is the port's job (daemon/internal/ledger); this package decides
// what a row says. Values never reach a row: a refusal's detail names paths
// and gates, and the principal's columns are the folded authority, never the
// token. Text a caller chooses — the path, a tool name over MCP, its client
// name, a detail that quotes what it sent — is bounded and has its control
// characters replaced before it reaches a row, and so a log line holding
// the row. The instance rules' columns name rules by id and failures by a
// class from a closed list, never a value nor the rule evaluator's text.
package ledger
