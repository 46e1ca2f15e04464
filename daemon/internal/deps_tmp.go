package internal

import (
	_ "github.com/lestrrat-go/jwx/v3/jwk"
	_ "github.com/lestrrat-go/jwx/v3/jws"
	_ "github.com/lestrrat-go/jwx/v3/jwt"
	_ "github.com/lestrrat-go/jwx/v3/jwa"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/prometheus/client_golang/prometheus/testutil"
	_ "github.com/nats-io/nats.go/jetstream"
)
