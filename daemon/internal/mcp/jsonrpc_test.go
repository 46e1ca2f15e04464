package mcp

import (
	"encoding/json"
	"testing"
)

func TestParseRequestReadsEachMemberOnceAndRefusesWhatIsNotOneRequest(t *testing.T) {
	cases := []struct {
		name string
		body string
		want *rpcError
	}{
		{"a request", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"x"}}`, nil},
		{"a notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil},
		{"a string id and spaces", ` { "jsonrpc" : "2.0" , "id" : "a\"b" , "method" : "ping" } `, nil},
		{"nested values skipped whole", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[{"b":"}]"}],"c":"\\"}}`, nil},
		{"a batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, errBatch},
		{"empty", ``, errParse},
		{"not JSON", `{"jsonrpc":`, errParse},
		{"trailing data", `{"jsonrpc":"2.0","id":1,"method":"ping"} {}`, errParse},
		{"not an object", `"ping"`, errParse},
		{"a duplicated member", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`, errDuplicateMember},
		{"a duplicate spelled with an escape", `{"jsonrpc":"2.0","id":1,"method":"ping","\u006dethod":"tools/call"}`, errDuplicateMember},
		{"version 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, errInvalidRequest},
		{"no version", `{"id":1,"method":"ping"}`, errInvalidRequest},
		{"no method", `{"jsonrpc":"2.0","id":1}`, errInvalidRequest},
		{"an empty method", `{"jsonrpc":"2.0","id":1,"method":""}`, errInvalidRequest},
		{"a method that is a number", `{"jsonrpc":"2.0","id":1,"method":7}`, errInvalidRequest},
		{"an object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, errInvalidRequest},
		{"a null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, errInvalidRequest},
		{"a bool id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, errInvalidRequest},
		{"an id over the bound", `{"jsonrpc":"2.0","id":"` + string(make([]byte, 0)) + longID() + `","method":"ping"}`, errInvalidRequest},
		{"params that are a list", `{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}`, errInvalidParams},
		{"the largest int64 id", `{"jsonrpc":"2.0","id":9223372036854775807,"method":"ping"}`, nil},
		{"the smallest int64 id", `{"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"}`, nil},
		{"an id past int64", `{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}`, errInvalidRequest},
		{"a fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, errInvalidRequest},
		{"an id with an exponent", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, errInvalidRequest},
		{"a _meta that is not an object", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":"x"}}`, errInvalidParams},
		{"params with a member twice", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":"a","name":"b"}}`, errInvalidParams},
	}
	for _, c := range cases {
		_, got := parseRequest([]byte(c.body))
		if got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func longID() string {
	b := make([]byte, maxID)
	for i := range b {
		b[i] = 'x'
	}
	return string(b)
}

func TestMembersAreTheValuesAsSent(t *testing.T) {
	m, err := members([]byte(`{"a" : {"x":[1,"]"]} ,"b":"q\"","c":-1.5e3,"d":null}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": `{"x":[1,"]"]}`, "b": `"q\""`, "c": `-1.5e3`, "d": `null`}
	for k, v := range want {
		if string(m[k]) != v || !json.Valid(m[k]) {
			t.Errorf("%s: %q, want %q", k, m[k], v)
		}
	}
	if len(m) != len(want) {
		t.Errorf("%d members", len(m))
	}
}
