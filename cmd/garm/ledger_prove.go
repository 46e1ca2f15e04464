package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/garm-dev/garm/ledger/merkle"
	"github.com/garm-dev/garm/ledger/rows"
	"github.com/garm-dev/garm/ledger/verify"
)

// inclusion is what garm ledger prove --event prints.
type inclusion struct {
	EventID   string      `json:"event_id"`
	LeafIndex uint64      `json:"leaf_index"`
	LeafHash  string      `json:"leaf_hash"`
	TreeSize  uint64      `json:"tree_size"`
	Root      string      `json:"root"`
	Proof     []string    `json:"inclusion_proof"`
	Head      verify.Head `json:"-"`
	HeadJSON  any         `json:"head"`
}

// consistency is what garm ledger prove --from --to prints.
type consistency struct {
	Size1 uint64   `json:"size1"`
	Root1 string   `json:"root1"`
	Size2 uint64   `json:"size2"`
	Root2 string   `json:"root2"`
	Proof []string `json:"consistency_proof"`
}

// runLedgerProve is garm ledger prove: RFC 9162 proofs against the signed
// heads, each checked before it is printed.
func runLedgerProve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("garm ledger prove", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var src ledgerSource
	src.flags(fs)
	event := fs.String("event", "", "prove that the row of event `id` is in a head")
	at := fs.Uint64("size", 0, "the head to prove against, by its size (default: the last head)")
	from := fs.Uint64("from", 0, "prove the head of this size consistent with --to's")
	to := fs.Uint64("to", 0, "the later head's size, for --from")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return exitOK
	} else if err != nil {
		return exitUsage
	}
	if err := src.check(); err != nil || fs.NArg() > 0 || (*event == "") == (*from == 0 && *to == 0) {
		fmt.Fprintln(stderr, "usage: garm ledger prove (--event ID [--size N] | --from N --to M) (--nats URL | --rows FILE --heads FILE)")
		return exitUsage
	}
	nc, js, err := src.connect()
	if err != nil {
		fmt.Fprintln(stderr, "garm ledger prove:", err)
		return exitFailed
	}
	if nc != nil {
		defer nc.Close()
	}
	heads, err := src.heads(ctx, js)
	if err != nil {
		fmt.Fprintln(stderr, "garm ledger prove: reading heads:", err)
		return exitFailed
	}
	bySize := map[uint64]verify.Head{}
	for _, h := range heads {
		if h.Err == nil {
			bySize[h.Head.Size] = h
		}
	}
	want := *to
	if *event != "" {
		want = *at
		if want == 0 && len(heads) > 0 {
			want = heads[len(heads)-1].Head.Size
		}
	}
	target, ok := bySize[want]
	if !ok {
		fmt.Fprintf(stderr, "garm ledger prove: no head of size %d\n", want)
		return exitFailed
	}
	// The leaves up to the head, and the event's place among them.
	var leaves []merkle.Hash
	index := int64(-1)
	errEnough := errors.New("enough rows")
	err = src.scanRows(ctx, js, func(r rows.Row) error {
		if uint64(len(leaves)) == want {
			return errEnough
		}
		if *event != "" && r.EventID == *event && index < 0 {
			index = int64(len(leaves))
		}
		leaves = append(leaves, r.Leaf)
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		fmt.Fprintln(stderr, "garm ledger prove:", err)
		return exitFailed
	}
	if uint64(len(leaves)) < want {
		fmt.Fprintf(stderr, "garm ledger prove: the rows end after %d, short of the head's %d\n", len(leaves), want)
		return exitFailed
	}
	if merkle.RootOf(leaves) != target.Head.Root {
		fmt.Fprintf(stderr, "garm ledger prove: the rows do not match %s; run garm ledger verify\n", target.Name)
		return exitFailed
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if *event != "" {
		if index < 0 {
			fmt.Fprintf(stderr, "garm ledger prove: event %q is not among the %d rows of the head\n", *event, want)
			return exitFailed
		}
		proof, _ := merkle.InclusionProof(leaves, uint64(index))
		if err := merkle.VerifyInclusion(uint64(index), want, leaves[index], proof, target.Head.Root); err != nil {
			fmt.Fprintln(stderr, "garm ledger prove:", err)
			return exitFailed
		}
		_ = enc.Encode(inclusion{
			EventID: *event, LeafIndex: uint64(index), LeafHash: leaves[index].String(), TreeSize: want,
			Root: target.Head.Root.String(), Proof: hexes(proof), HeadJSON: target.Head,
		})
		return exitOK
	}
	first, ok := bySize[*from]
	if !ok || *from > *to {
		fmt.Fprintf(stderr, "garm ledger prove: no head of size %d before the head of size %d\n", *from, *to)
		return exitFailed
	}
	proof, _ := merkle.ConsistencyProof(leaves, *from)
	if err := merkle.VerifyConsistency(*from, *to, first.Head.Root, target.Head.Root, proof); err != nil {
		fmt.Fprintln(stderr, "garm ledger prove:", err)
		return exitFailed
	}
	_ = enc.Encode(consistency{Size1: *from, Root1: first.Head.Root.String(), Size2: *to, Root2: target.Head.Root.String(), Proof: hexes(proof)})
	return exitOK
}

func hexes(hs []merkle.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.String()
	}
	return out
}
