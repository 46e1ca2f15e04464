package bank

import (
	"time"

	accountsv1 "github.com/garm-dev/garm/examples/bank/gen/accounts/v1"
	cardsv1 "github.com/garm-dev/garm/examples/bank/gen/cards/v1"
	"github.com/garm-dev/garm/examples/bank/store"
)

// The demo data a quick-start shows. Every store NewStore makes holds them.
const (
	// DemoCustomer is Priya Raman, who holds DemoAccount, a savings account
	// and two cards: the customer get_customer, get_balance and list_cards
	// are shown with.
	DemoCustomer = "C-1001"
	// DemoAccount is DemoCustomer's GBP current account, which the demo
	// payment is made from.
	DemoAccount = "A-10001"
	// DemoOtherAccount is another customer's GBP current account: a grant
	// approving the demo payment from DemoAccount does not pay from it.
	DemoOtherAccount = "A-10003"
	// DemoCard is DemoCustomer's active Visa debit card: the card the tour
	// freezes and unfreezes.
	DemoCard = "CARD-2001"
	// DemoFrozenCard is another customer's card, frozen as lost, so freezing
	// it is refused as a conflict and unfreezing it succeeds.
	DemoFrozenCard = "CARD-2003"

	// DemoSelfServiceCustomer is Tomasz Nowak, whom CustomerPersona is: he
	// holds DemoOtherAccount and a euro account, and DemoFrozenCard.
	DemoSelfServiceCustomer = "C-1002"
	// DemoConciergeAccount is the one of DemoSelfServiceCustomer's accounts
	// ConciergeAgent is trusted with: get_balance shows it that one alone.
	DemoConciergeAccount = DemoOtherAccount
	// DemoOverCapAmountMinorUnits is a payment an agent may not make in one
	// call: above initiate_payment's agent_cap rule, 15,000.00 GBP, so an
	// agent asking for it is refused before any approval is asked. The
	// demo payment, DemoAmountMinorUnits, is within the cap.
	DemoOverCapAmountMinorUnits = 1500000

	// DemoBeneficiaryName is who the demo payment pays.
	DemoBeneficiaryName = "Northwind Supplies Ltd"
	// DemoBeneficiaryIBAN is the demo payment's beneficiary, the example
	// IBAN of ISO 13616.
	DemoBeneficiaryIBAN = "GB29NWBK60161331926819"
	// DemoAmountMinorUnits is the demo payment's amount in pence: 1,250.00
	// GBP. With DemoCurrency and DemoBeneficiaryIBAN it is the material of
	// the specification's reference grant digest.
	DemoAmountMinorUnits = 125000
	// DemoCurrency is the demo payment's currency, DemoAccount's.
	DemoCurrency = "GBP"
	// DemoReference is what the demo payment's beneficiary sees on their
	// statement.
	DemoReference = "INV-2291"
)

// Tenant is the tenant every token of personas.yaml names.
const Tenant = "acme-bank"

// The handles of personas.yaml: what the dev identity provider issues
// tokens for (GET /token?user=<handle>[&as=<agent>]).
const (
	// SupportPersona is a support agent: INTERNAL, holding pii-contact,
	// card-data and financial, reading and writing, scoped to the support
	// tools. get_customer shows them the domain of an email address only.
	SupportPersona = "support"
	// AnalystPersona is cleared for identity data: RESTRICTED, holding
	// pii-contact, pii-identity and financial, reading only. get_customer
	// shows them everything, national id included.
	AnalystPersona = "analyst"
	// TreasurerPersona initiates payments: RESTRICTED, holding financial,
	// reading, writing and destroying, scoped to the payments tools.
	TreasurerPersona = "treasurer"
	// ApproverPersona approves payments (a user: an agent never approves):
	// RESTRICTED, holding financial, reading only.
	ApproverPersona = "approver"
	// OutsiderPersona is a contractor: CONFIDENTIAL with no compartments, so
	// every bank tool is invisible to them and answers 404.
	OutsiderPersona = "outsider"
	// AssistantAgent is an AI agent that may act for SupportPersona; acting
	// for them it has exactly their authority.
	AssistantAgent = "assistant"
	// PayerAgent is an AI agent that may act for TreasurerPersona: it asks
	// for payments, which a human other than the treasurer approves in the
	// approvals inbox, and never more than initiate_payment's agent cap in
	// one call.
	PayerAgent = "payer"
	// CustomerPersona is a customer, DemoSelfServiceCustomer, on the
	// self-service tools: INTERNAL, holding pii-contact, card-data and
	// financial but not any-customer, reading only. His token's garm.attrs
	// name his customer id and both his accounts, so the instance rules let
	// him reach his own records and nobody else's.
	CustomerPersona = "customer"
	// ConciergeAgent is an AI agent that may act for CustomerPersona, its
	// own garm.attrs listing only DemoConciergeAccount: acting for him it
	// sees that account alone.
	ConciergeAgent = "concierge"
)

// day is midnight UTC of a date.
func day(year int, month time.Month, d int) time.Time {
	return time.Date(year, month, d, 0, 0, 0, 0, time.UTC)
}

// demoSeed is the demo data: realistic, and all of it fake. Emails are at
// the domains RFC 2606 reserves, phone numbers in Ofcom's range for drama,
// national insurance numbers in the QQ prefix HMRC never issues, and card
// numbers are the payment networks' published test numbers.
func demoSeed() store.Seed {
	const (
		current = accountsv1.AccountType_ACCOUNT_TYPE_CURRENT
		savings = accountsv1.AccountType_ACCOUNT_TYPE_SAVINGS
		visa    = cardsv1.CardBrand_CARD_BRAND_VISA
		mc      = cardsv1.CardBrand_CARD_BRAND_MASTERCARD
		debit   = cardsv1.CardFunding_CARD_FUNDING_DEBIT
		credit  = cardsv1.CardFunding_CARD_FUNDING_CREDIT
		active  = cardsv1.CardStatus_CARD_STATUS_ACTIVE
	)
	return store.Seed{
		Customers: []store.Customer{
			{
				ID: DemoCustomer, DisplayName: "Priya Raman", Email: "priya.raman@example.com", Phone: "+447700900123",
				DateOfBirth: day(1988, time.April, 12), NationalID: "QQ123456C", CustomerSince: day(2015, time.March, 2),
			},
			{
				ID: "C-1002", DisplayName: "Tomasz Nowak", Email: "t.nowak@example.org", Phone: "+447700900456",
				DateOfBirth: day(1979, time.November, 30), NationalID: "QQ234567B", CustomerSince: day(2009, time.June, 15),
			},
			{
				ID: "C-1003", DisplayName: "Grace Okafor", Email: "grace.okafor@example.net", Phone: "+447700900789",
				DateOfBirth: day(1995, time.July, 21), NationalID: "QQ345678A", CustomerSince: day(2021, time.January, 11),
			},
		},
		Accounts: []store.Account{
			{ID: DemoAccount, CustomerID: DemoCustomer, Name: "Everyday current account", Type: current, IBAN: "GB57ACMB40010012345678", Currency: "GBP", OpeningBalance: 2_450_075},
			{ID: "A-10002", CustomerID: DemoCustomer, Name: "Rainy-day savings", Type: savings, IBAN: "GB96ACMB40010087654321", Currency: "GBP", OpeningBalance: 1_200_000},
			{ID: "A-10003", CustomerID: "C-1002", Name: "Current account", Type: current, IBAN: "GB40ACMB40010044556677", Currency: "GBP", OpeningBalance: 84_210},
			{ID: "A-10004", CustomerID: "C-1002", Name: "Euro account", Type: current, IBAN: "GB26ACMB40010099887766", Currency: "EUR", OpeningBalance: 310_000},
			{ID: "A-10005", CustomerID: "C-1003", Name: "Current account", Type: current, IBAN: "GB81ACMB40010011223344", Currency: "GBP", OpeningBalance: 1_523_399},
		},
		Cards: []store.Card{
			{
				ID: DemoCard, CustomerID: DemoCustomer, AccountID: DemoAccount, Number: "4111111111111111", Brand: visa, Funding: debit,
				CardholderName: "MS PRIYA RAMAN", ExpiryMonth: 9, ExpiryYear: 2028, Status: active,
			},
			{
				ID: "CARD-2002", CustomerID: DemoCustomer, AccountID: DemoAccount, Number: "5555555555554444", Brand: mc, Funding: credit,
				CardholderName: "MS PRIYA RAMAN", ExpiryMonth: 3, ExpiryYear: 2027, Status: active,
			},
			{
				ID: DemoFrozenCard, CustomerID: "C-1002", AccountID: "A-10003", Number: "4000056655665556", Brand: visa, Funding: debit,
				CardholderName: "MR TOMASZ NOWAK", ExpiryMonth: 12, ExpiryYear: 2027, Status: cardsv1.CardStatus_CARD_STATUS_FROZEN,
				FrozenAt: time.Date(2025, time.October, 3, 18, 42, 0, 0, time.UTC), FreezeReason: cardsv1.FreezeReason_FREEZE_REASON_LOST,
			},
			{
				ID: "CARD-2004", CustomerID: "C-1003", AccountID: "A-10005", Number: "5200828282828210", Brand: mc, Funding: debit,
				CardholderName: "MS GRACE OKAFOR", ExpiryMonth: 5, ExpiryYear: 2029, Status: active,
			},
		},
	}
}
