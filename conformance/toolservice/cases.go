package toolservice

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// FormatVersion is the version of the case file format this kit reads.
const FormatVersion = 1

//go:embed cases/*.json
var shipped embed.FS

// File is one case file.
type File struct {
	// Version is the case format version; the kit refuses another.
	Version int    `json:"version"`
	Cases   []Case `json:"cases"`
}

// Case is one check: what is sent and the one thing expected.
type Case struct {
	// Name is unique across the suite, "area.what".
	Name string `json:"name"`
	// Promise says, in a sentence, which promise of the hop contract it
	// checks (docs/hop-contract.md).
	Promise string `json:"promise"`
	Send    Send   `json:"send"`
	Expect  Expect `json:"expect"`
}

// Send is what a case sends.
type Send struct {
	// Action is "call" (the default), "info", "ping", "stats",
	// "queue_group", "concurrent", or a lifecycle action: "drain_inflight",
	// "drain_new", "drain_exit", "restart".
	Action string `json:"action,omitempty"`
	// Tool is the garm.conformance.v1.Conformance method called.
	Tool string `json:"tool,omitempty"`
	// Body is the request in protobuf JSON; BodyHex, when set, is sent
	// instead as raw bytes.
	Body    json.RawMessage `json:"body,omitempty"`
	BodyHex *string         `json:"body_hex,omitempty"`
	// Invocation is protobuf JSON of a garm.tool.v1.InvocationContext laid
	// over the default one (a fresh call_id).
	Invocation json.RawMessage `json:"invocation,omitempty"`
	// DeadlineMillis is the invocation's deadline relative to sending;
	// negative is already past. Without it the deadline is 5 s away;
	// NoDeadline sends none.
	DeadlineMillis *int64 `json:"deadline_ms,omitempty"`
	NoDeadline     bool   `json:"no_deadline,omitempty"`
	// Header says how the Garm-Invocation header is spelled: "" (once,
	// canonical), "absent", "empty", "twice", "unpadded", "urlsafe",
	// "linebreak", "not_base64", "not_proto", "no_call_id",
	// "unknown_field", "bad_deadline", "oversize".
	Header string `json:"header,omitempty"`
	// Concurrent is the call that runs while the case's call is made
	// (action "concurrent"); the case's call starts ConcurrentLeadMillis
	// after it.
	Concurrent           *Send `json:"concurrent,omitempty"`
	ConcurrentLeadMillis int   `json:"concurrent_lead_ms,omitempty"`
}

// Expect is the one thing a case expects. Exactly one of its groups is set:
// Code (with Message or MessageNonEmpty), Response (with Ranges), Info,
// NoResponders, RefusedOrUnserved, WithinMillis, QueueShared, ExitsWithin.
type Expect struct {
	// Code is the Nats-Service-Error-Code of an error answer.
	Code            string  `json:"code,omitempty"`
	Message         *string `json:"message,omitempty"`
	MessageNonEmpty bool    `json:"message_nonempty,omitempty"`
	// Response is a subset of the answer in protobuf JSON (camelCase
	// names); Ranges bounds numeric fields of it, both ends inclusive.
	Response json.RawMessage     `json:"response,omitempty"`
	Ranges   map[string][2]int64 `json:"ranges,omitempty"`
	// Info is a subset of the discovery answer's JSON; the strings
	// "{identity}", "{contract_version}", "{service}" stand for the contract's
	// values.
	Info json.RawMessage `json:"info,omitempty"`
	// RefusedOrUnserved: a 503 answer, no responders, or no answer at all;
	// never a handler's answer.
	RefusedOrUnserved bool `json:"refused_or_unserved,omitempty"`
	// WithinMillis: a response (any) arrives this soon after sending.
	WithinMillis int `json:"within_ms,omitempty"`
	// QueueShared: requests on a tool's subject are shared with another
	// member of the queue group the contract names.
	QueueShared bool `json:"queue_shared,omitempty"`
	// ExitsWithinMillis: the process exits with status 0 this soon after
	// the signal.
	ExitsWithinMillis int `json:"exits_within_ms,omitempty"`
}

func (e Expect) kinds() int {
	n := 0
	for _, set := range []bool{e.Code != "", e.Response != nil, e.Info != nil, e.RefusedOrUnserved,
		e.WithinMillis > 0, e.QueueShared, e.ExitsWithinMillis > 0} {
		if set {
			n++
		}
	}
	return n
}

// lifecycle reports whether the case needs a process the kit started.
func (c Case) lifecycle() bool {
	switch c.Send.Action {
	case "drain_inflight", "drain_new", "drain_exit", "restart":
		return true
	}
	return false
}

// Shipped returns the cases shipped with the kit, in file then case order.
func Shipped() ([]Case, error) { return Load(shipped, "cases") }

// Load reads every *.json case file under dir of fsys, in name order, and
// checks each case: a known format version, a unique name, a known action
// and exactly one expectation.
func Load(fsys fs.FS, dir string) ([]Case, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var all []Case
	seen := map[string]bool{}
	for _, name := range names {
		data, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		var f File
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if f.Version != FormatVersion {
			return nil, fmt.Errorf("%s: case format version %d, this kit reads %d", name, f.Version, FormatVersion)
		}
		for _, c := range f.Cases {
			if err := check(c); err != nil {
				return nil, fmt.Errorf("%s: case %q: %w", name, c.Name, err)
			}
			if seen[c.Name] {
				return nil, fmt.Errorf("%s: case %q appears twice", name, c.Name)
			}
			seen[c.Name] = true
			all = append(all, c)
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no cases under %s", dir)
	}
	return all, nil
}

func check(c Case) error {
	if c.Name == "" || c.Promise == "" {
		return fmt.Errorf("needs a name and a promise")
	}
	switch c.Send.Action {
	case "", "call", "concurrent", "drain_inflight", "drain_new", "drain_exit", "restart":
		if c.Send.Tool == "" {
			return fmt.Errorf("action %q needs a tool", c.Send.Action)
		}
	case "info", "ping", "stats", "queue_group":
	default:
		return fmt.Errorf("unknown action %q", c.Send.Action)
	}
	if n := c.Expect.kinds(); n != 1 {
		return fmt.Errorf("expects %d things, want exactly one", n)
	}
	return nil
}
