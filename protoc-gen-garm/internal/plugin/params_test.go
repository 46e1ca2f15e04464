package plugin

import (
	"strings"
	"testing"
)

func TestParameters(t *testing.T) {
	tests := []struct {
		name, value string
		want        Params
		wantErr     string
	}{
		{name: "contract_version", value: "1.4.0", want: Params{ContractVersion: "1.4.0", Plans: true}},
		{name: "contract_version", value: "2026.11.1+build.7", want: Params{ContractVersion: "2026.11.1+build.7", Plans: true}},
		{name: "plans", value: "false", want: Params{ContractVersion: "dev", Plans: false}},
		{name: "plans", value: "true", want: Params{ContractVersion: "dev", Plans: true}},
		{name: "plans", value: "yes", wantErr: `plans="yes": want true or false`},
		{name: "contract_version", value: "", wantErr: "contract_version"},
		{name: "contract_version", value: "1.0\"; panic(1) //", wantErr: "contract_version"},
		{name: "contract_version", value: strings.Repeat("9", 65), wantErr: "contract_version"},
		{name: "colour", value: "blue", wantErr: `unknown parameter "colour": protoc-gen-garm takes paths, module, contract_version and plans`},
	}
	for _, tt := range tests {
		p := DefaultParams()
		err := p.Set(tt.name, tt.value)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Set(%q, %q) = %v, want an error containing %q", tt.name, tt.value, err, tt.wantErr)
			}
			if err != nil && p != DefaultParams() {
				t.Errorf("Set(%q, %q) failed but changed the parameters to %+v", tt.name, tt.value, p)
			}
		case err != nil:
			t.Errorf("Set(%q, %q) = %v", tt.name, tt.value, err)
		case p != tt.want:
			t.Errorf("Set(%q, %q) gave %+v, want %+v", tt.name, tt.value, p, tt.want)
		}
	}
}
