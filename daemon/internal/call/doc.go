// Package call is the shared vocabulary of one call through garmd: who is
// calling (Principal), what is being called (Tool), and the sets both are
// measured in (Verbs, Compartments, Shape). It is data: no step's behaviour
// lives here, so every step package can import it and none imports another.
//
// Compartments are numbered as bits within one catalogue generation (design
// 3.2): a Principal and a Tool compared with each other were both numbered
// by the same generation. Bit numbers never leave the process; the ledger and
// the wire use the names kept beside them.
package call
