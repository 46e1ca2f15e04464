package main

import "github.com/garm-dev/garm/examples/bank"

// demo is what the quick-start and the tour show: persona handles, the
// tools they call and the requests they send.
type demo struct {
	support, analyst, outsider, treasurer, approver string
	agent                                           string
	customerTool, paymentTool                       string
	// customer is a customer on the self-service tools; concierge an
	// agent acting for them with fewer accounts; payer an agent acting
	// for treasurer.
	customer, concierge, payer     string
	balanceTool, paymentStatusTool string
	// selfCustomer is customer's own customer id, conciergeAccount the
	// one account the concierge may act on, and ownBalance get_balance's
	// request for selfCustomer.
	selfCustomer, conciergeAccount string
	ownBalanceRequest              customerRequest
	// tourPayment is the id the tour's payment gets on a fresh stack (the
	// demo customer's, so another customer's to the concierge), and
	// missingPayment an id no payment has.
	tourPayment, missingPayment string
	// overCapPaymentRequest is the demo payment above an agent's cap.
	overCapPaymentRequest paymentRequest
	// cardsTool is the tool the concierge lists its customer's cards with
	// until it meets agentLimit, the contract's limit keyed on the agent
	// and the person it acts for; personLimit is the person's own
	// (decision 0124).
	cardsTool, agentLimit, personLimit string
	// otherAccount is an account the demo payment's grant does not pay
	// from.
	otherAccount    string
	customerRequest customerRequest
	paymentRequest  paymentRequest
}

// paymentStatusRequest is get_payment_status's request body.
type paymentStatusRequest struct {
	PaymentID string `json:"payment_id"`
}

// customerRequest is get_customer's (and get_balance's) request body.
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
	payment := paymentRequest{
		FromAccountID:    bank.DemoAccount,
		AmountMinorUnits: bank.DemoAmountMinorUnits,
		CurrencyCode:     bank.DemoCurrency,
		BeneficiaryName:  bank.DemoBeneficiaryName,
		BeneficiaryIBAN:  bank.DemoBeneficiaryIBAN,
		Reference:        bank.DemoReference,
	}
	overCap := payment
	overCap.AmountMinorUnits = bank.DemoOverCapAmountMinorUnits
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
		paymentRequest:  payment,

		customer:              bank.CustomerPersona,
		concierge:             bank.ConciergeAgent,
		payer:                 bank.PayerAgent,
		balanceTool:           "accounts.v1.get_balance",
		paymentStatusTool:     "payments.v1.get_payment_status",
		selfCustomer:          bank.DemoSelfServiceCustomer,
		conciergeAccount:      bank.DemoConciergeAccount,
		ownBalanceRequest:     customerRequest{CustomerID: bank.DemoSelfServiceCustomer},
		tourPayment:           "PAY-000001",
		missingPayment:        "PAY-999999",
		overCapPaymentRequest: overCap,
		cardsTool:             "cards.v1.list_cards",
		agentLimit:            "per_agent",
		personLimit:           "per_subject",
	}
}
