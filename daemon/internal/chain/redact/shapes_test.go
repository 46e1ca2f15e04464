package redact_test

import (
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/encoding/protowire"
)

// shapeCase is one caller shape against get_account's answer (Account): what
// it is denied, which audited fields it may read, and which of fullAccount's
// fields it must not receive.
type shapeCase struct {
	name         string
	clearance    toolv1.Clearance
	compartments []string
	denied       []string
	audited      []string
	withheld     []string
}

var shapeCases = []shapeCase{
	{
		name:      "internal",
		clearance: internal,
		denied: []string{"billing", "billing_summary", "contacts.email", "contacts.tax_number", "holdings.amount",
			"holdings.reference", "national_id", "tags", "labels", "last_login_ip", "last_phone"},
		audited: []string{"nickname"},
		withheld: []string{"billing.iban", "billing.holder", "billing_summary", "contacts.email", "contacts.tax_number",
			"holdings.amount", "holdings.reference", "national_id", "tags", "labels", "last_phone"},
	},
	{
		name:      "confidential without compartments",
		clearance: confidential,
		denied: []string{"billing", "contacts.email", "contacts.tax_number", "holdings.amount",
			"national_id", "last_phone"},
		audited: []string{"nickname"},
		withheld: []string{"billing.iban", "billing.holder", "contacts.email", "contacts.tax_number",
			"holdings.amount", "national_id", "last_phone"},
	},
	{
		name:         "confidential and financial",
		clearance:    confidential,
		compartments: []string{"financial"},
		denied:       []string{"billing.holder", "contacts.email", "contacts.tax_number", "national_id", "last_phone"},
		audited:      []string{"nickname"},
		withheld:     []string{"billing.holder", "contacts.email", "contacts.tax_number", "national_id", "last_phone"},
	},
	{
		name:         "confidential, financial and pii",
		clearance:    confidential,
		compartments: []string{"financial", "pii"},
		denied:       []string{"billing.holder", "contacts.tax_number", "national_id"},
		audited:      []string{"nickname"},
		withheld:     []string{"billing.holder", "contacts.tax_number", "national_id"},
	},
	{
		// billing.holder is readable at RESTRICTED, but billing is not
		// without financial: the parent's denial takes it, so it is
		// neither listed as denied nor audited.
		name:      "restricted without compartments",
		clearance: restricted,
		denied:    []string{"billing", "contacts.email", "holdings.amount", "national_id", "last_phone"},
		audited:   []string{"contacts.tax_number", "nickname"},
		withheld: []string{"billing.iban", "billing.holder", "contacts.email", "holdings.amount",
			"national_id", "last_phone"},
	},
	{
		name:         "restricted with every compartment",
		clearance:    restricted,
		compartments: []string{"financial", "pii"},
		audited:      []string{"billing.holder", "contacts.tax_number", "national_id", "nickname"},
	},
	{
		name:      "unspecified clearance",
		clearance: unspecified,
		denied: []string{"account_id", "billing", "billing_summary", "contacts", "holdings", "national_id",
			"tags", "labels", "last_login_ip", "last_phone", "nickname"},
		withheld: secretPaths,
	},
}

// fullAccount sets every field of Account (last_login_ip shares a oneof with
// last_phone and is left out), each to values found nowhere else, in two
// list elements and two map values where it can.
const fullAccount = `{
  "accountId": "ACCT-ID-0001",
  "billing": {"iban": "IBAN-DE89-7781", "holder": "HOLDER-MARGOT-5512"},
  "billingSummary": "SUMMARY-MONTHLY-3090",
  "contacts": [
    {"name": "NAME-ANA-0101", "email": "ana-0101@mail.example", "taxNumber": "TAX-ANA-4410"},
    {"name": "NAME-BO-0202", "email": "bo-0202@mail.example", "taxNumber": "TAX-BO-4411"}
  ],
  "holdings": {
    "HOLDING-KEY-AAPL": {"amount": "912837465", "reference": "REF-AAPL-7777"},
    "HOLDING-KEY-MSFT": {"amount": "723456789", "reference": "REF-MSFT-7878"}
  },
  "nationalId": "NATID-0042-9999",
  "tags": ["TAG-VIP-3131"],
  "labels": {"LABEL-KEY-RISK": "LABEL-VALUE-3232"},
  "lastPhone": "PHONE-555-0199",
  "nickname": "NICK-MARGO-0808"
}`

// secrets are fullAccount's values by the path of the field holding them,
// as they appear in the binary encoding.
var secrets = map[string][][]byte{
	"account_id":          {[]byte("ACCT-ID-0001")},
	"billing.iban":        {[]byte("IBAN-DE89-7781")},
	"billing.holder":      {[]byte("HOLDER-MARGOT-5512")},
	"billing_summary":     {[]byte("SUMMARY-MONTHLY-3090")},
	"contacts.name":       {[]byte("NAME-ANA-0101"), []byte("NAME-BO-0202")},
	"contacts.email":      {[]byte("ana-0101@mail.example"), []byte("bo-0202@mail.example")},
	"contacts.tax_number": {[]byte("TAX-ANA-4410"), []byte("TAX-BO-4411")},
	"holdings":            {[]byte("HOLDING-KEY-AAPL"), []byte("HOLDING-KEY-MSFT")},
	"holdings.amount":     {varintField(1, 912837465), varintField(1, 723456789)},
	"holdings.reference":  {[]byte("REF-AAPL-7777"), []byte("REF-MSFT-7878")},
	"national_id":         {[]byte("NATID-0042-9999")},
	"tags":                {[]byte("TAG-VIP-3131")},
	"labels":              {[]byte("LABEL-KEY-RISK"), []byte("LABEL-VALUE-3232")},
	"last_phone":          {[]byte("PHONE-555-0199")},
	"nickname":            {[]byte("NICK-MARGO-0808")},
}

var secretPaths = func() []string {
	var paths []string
	for p := range secrets {
		paths = append(paths, p)
	}
	return paths
}()

// varintField is field n holding v, as the binary encoding writes it.
func varintField(n protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, n, protowire.VarintType), v)
}
