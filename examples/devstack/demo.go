package main

import "github.com/garm-dev/garm/examples/bank"

// demo is what the quick-start and the tour show: persona handles, the
// tools they call and the requests they send.
type demo struct {
	support, analyst, outsider, treasurer, approver string
	agent                                           string
	customerTool, paymentTool                       string
	// otherAccount is an account the demo payment's grant does not pay
	// from.
	otherAccount    string
	customerRequest customerRequest
	paymentRequest  paymentRequest
}

// customerRequest is get_customer's request body.
type customerRequest struct {
	CustomerID string `json:"customer_id"`
}

// paymentRequest is initiate_payment's request body, its fields in the
// order a person reads a payment.
type paymentRequest struct {
	FromAccountID    string `json:"from_account_id"`
	AmountMinorUnits int64  `json:"amount_minor_units"`
	CurrencyCode     string `json:"currency_code"`
	BeneficiaryName  string `json:"beneficiary_name"`
	BeneficiaryIBAN  string `json:"beneficiary_iban"`
	Reference        string `json:"reference"`
}

// bankDemo is the example bank's demo: its personas and seeded data.
// Request bodies use proto field names, which garmd accepts beside
// protojson's camelCase, so each key is also the material path it feeds.
func bankDemo() demo {
	return demo{
		support:         bank.SupportPersona,
		analyst:         bank.AnalystPersona,
		outsider:        bank.OutsiderPersona,
		treasurer:       bank.TreasurerPersona,
		approver:        bank.ApproverPersona,
		agent:           bank.AssistantAgent,
		customerTool:    "accounts.v1.get_customer",
		paymentTool:     "payments.v1.initiate_payment",
		otherAccount:    bank.DemoOtherAccount,
		customerRequest: customerRequest{CustomerID: bank.DemoCustomer},
		paymentRequest: paymentRequest{
			FromAccountID:    bank.DemoAccount,
			AmountMinorUnits: bank.DemoAmountMinorUnits,
			CurrencyCode:     bank.DemoCurrency,
			BeneficiaryName:  bank.DemoBeneficiaryName,
			BeneficiaryIBAN:  bank.DemoBeneficiaryIBAN,
			Reference:        bank.DemoReference,
		},
	}
}
