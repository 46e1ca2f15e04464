package bank

import (
	"github.com/garm-dev/garm/examples/bank/accounts"
	"github.com/garm-dev/garm/examples/bank/cards"
	accountsv1 "github.com/garm-dev/garm/examples/bank/gen/accounts/v1"
	cardsv1 "github.com/garm-dev/garm/examples/bank/gen/cards/v1"
	paymentsv1 "github.com/garm-dev/garm/examples/bank/gen/payments/v1"
	"github.com/garm-dev/garm/examples/bank/payments"
	"github.com/garm-dev/garm/examples/bank/store"
	"github.com/garm-dev/garm/runtime/garmtool"
)

// Paths relative to the repository root.
const (
	// ManifestPath is the bank's catalogue manifest, for garm-catalogue build
	// or builder.FromManifest.
	ManifestPath = "examples/bank/catalogue.yaml"
	// PersonasPath is the bank's persona file, for the dev identity provider
	// (idp.LoadPersonas).
	PersonasPath = "examples/bank/personas.yaml"
)

// Version is the version the bank's tool services publish on $SRV.INFO.
const Version = "0.1.0"

// NewStore returns a fresh in-memory store holding the demo data, with
// opts (a clock, a settle delay) applied.
func NewStore(opts ...store.Option) (*store.Bank, error) {
	return store.New(demoSeed(), opts...)
}

// Services returns the bank's tool services, ready to Run on a NATS
// connection: accounts.v1.AccountsService, cards.v1.CardsService and
// payments.v1.PaymentsService, in that order, each on a garmtool.Service of
// its own (one serves one proto package, whose descriptor hash it
// advertises) and all backed by one fresh store holding the demo data, so a
// payment is taken from the balance get_balance reports. opts apply to each
// service.
//
//	svcs, err := bank.Services(garmtool.WithLogger(logger))
//	…
//	for _, svc := range svcs {
//		go func() { errs <- svc.Run(ctx, nc) }()
//	}
func Services(opts ...garmtool.Option) ([]*garmtool.Service, error) {
	b, err := NewStore()
	if err != nil {
		return nil, err
	}
	accountsSvc := garmtool.New("bank-accounts", Version, opts...)
	if err := accountsv1.ServeAccountsService(accountsSvc, accounts.New(b)); err != nil {
		return nil, err
	}
	cardsSvc := garmtool.New("bank-cards", Version, opts...)
	if err := cardsv1.ServeCardsService(cardsSvc, cards.New(b)); err != nil {
		return nil, err
	}
	paymentsSvc := garmtool.New("bank-payments", Version, opts...)
	if err := paymentsv1.ServePaymentsService(paymentsSvc, payments.New(b)); err != nil {
		return nil, err
	}
	return []*garmtool.Service{accountsSvc, cardsSvc, paymentsSvc}, nil
}
