package otlphttp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// Config is where and how an Exporter sends.
type Config struct {
	// URL is the traces endpoint, http or https.
	URL string
	// Headers are sent with every export.
	Headers http.Header
	// Timeout bounds one export, its retries included.
	Timeout time.Duration
	// Gzip compresses each request's body.
	Gzip bool
	// TLS is the client's TLS configuration for an https URL: the
	// roots to trust and a client certificate, when the variables name
	// them. Nil is the system's roots and no client certificate.
	TLS *tls.Config
}

// DefaultTimeout is an export's bound when no OTEL_EXPORTER_OTLP_TIMEOUT
// is set, the specification's default.
const DefaultTimeout = 10 * time.Second

// TracesPath is what OTEL_EXPORTER_OTLP_ENDPOINT's path is joined with.
const TracesPath = "/v1/traces"

// ConfigFromEnv is the Config the OTEL_EXPORTER_OTLP_* variables describe,
// each read in its _TRACES_ form first, as the SDK's OTLP/HTTP exporter
// reads them: ENDPOINT (TracesPath joined to its path; the _TRACES_ form
// is used as it is), HEADERS (key=value pairs separated by commas, values
// percent-decoded), TIMEOUT (milliseconds), COMPRESSION (gzip or none),
// CERTIFICATE (a PEM file of the roots to trust), CLIENT_CERTIFICATE and
// CLIENT_KEY (PEM files). The endpoint's scheme decides whether TLS is
// used; INSECURE is the gRPC exporter's. Where the SDK would skip a value
// it cannot read, this refuses it: garmd does not start exporting
// somewhere other than where its operator meant. An error names the
// variable, never its value, which may carry a credential.
func ConfigFromEnv(lookup func(string) (string, bool)) (Config, error) {
	get := func(name string) (string, string, bool) {
		for _, n := range []string{"OTEL_EXPORTER_OTLP_TRACES_" + name, "OTEL_EXPORTER_OTLP_" + name} {
			if v, ok := lookup(n); ok && strings.TrimSpace(v) != "" {
				return n, strings.TrimSpace(v), true
			}
		}
		return "", "", false
	}
	cfg := Config{Timeout: DefaultTimeout, Headers: http.Header{}}

	if v, ok := lookup("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); ok && strings.TrimSpace(v) != "" {
		u, err := endpoint("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", v)
		if err != nil {
			return Config{}, err
		}
		if u.Path == "" {
			u.Path = "/"
		}
		cfg.URL = u.String()
	} else if v, ok := lookup("OTEL_EXPORTER_OTLP_ENDPOINT"); ok && strings.TrimSpace(v) != "" {
		u, err := endpoint("OTEL_EXPORTER_OTLP_ENDPOINT", v)
		if err != nil {
			return Config{}, err
		}
		u.Path = path.Join(u.Path, TracesPath)
		cfg.URL = u.String()
	} else {
		return Config{}, errors.New("neither OTEL_EXPORTER_OTLP_TRACES_ENDPOINT nor OTEL_EXPORTER_OTLP_ENDPOINT is set")
	}

	if name, v, ok := get("HEADERS"); ok {
		if err := parseHeaders(v, cfg.Headers); err != nil {
			return Config{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	if name, v, ok := get("TIMEOUT"); ok {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms <= 0 || ms > int64(time.Hour/time.Millisecond) {
			return Config{}, fmt.Errorf("%s: not a whole number of milliseconds from 1 to 3600000", name)
		}
		cfg.Timeout = time.Duration(ms) * time.Millisecond
	}
	if name, v, ok := get("COMPRESSION"); ok {
		switch v {
		case "gzip":
			cfg.Gzip = true
		case "none":
		default:
			return Config{}, fmt.Errorf("%s: neither gzip nor none", name)
		}
	}

	var tc tls.Config
	if name, file, ok := get("CERTIFICATE"); ok {
		pem, err := os.ReadFile(file)
		if err != nil {
			return Config{}, fmt.Errorf("%s: %w", name, withoutPath(err))
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return Config{}, fmt.Errorf("%s: the file holds no PEM certificate", name)
		}
		tc.RootCAs = roots
	}
	certName, certFile, hasCert := get("CLIENT_CERTIFICATE")
	keyName, keyFile, hasKey := get("CLIENT_KEY")
	switch {
	case hasCert && hasKey:
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return Config{}, fmt.Errorf("%s and %s: %w", certName, keyName, withoutPath(err))
		}
		tc.Certificates = []tls.Certificate{pair}
	case hasCert:
		return Config{}, fmt.Errorf("%s is set without OTEL_EXPORTER_OTLP_CLIENT_KEY", certName)
	case hasKey:
		return Config{}, fmt.Errorf("%s is set without OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", keyName)
	}
	if tc.RootCAs != nil || tc.Certificates != nil {
		tc.MinVersion = tls.VersionTLS12
		cfg.TLS = &tc
	}
	return cfg, nil
}

// withoutPath is err without the file's path, which is a variable's value.
func withoutPath(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}

// endpoint is v as an http or https URL with a host; its query and
// fragment are dropped, as the SDK drops them.
func endpoint(name, v string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s: not an http or https URL with a host", name)
	}
	return &url.URL{Scheme: u.Scheme, User: u.User, Host: u.Host, Path: u.Path}, nil
}

// parseHeaders sets the comma-separated key=value pairs of v in h, as
// the SDK reads them: each key trimmed, each value percent-decoded and
// trimmed, a later pair of a key replacing an earlier one.
func parseHeaders(v string, h http.Header) error {
	for pair := range strings.SplitSeq(v, ",") {
		k, val, ok := strings.Cut(pair, "=")
		if !ok {
			return errors.New("an entry is not key=value")
		}
		key := strings.TrimSpace(k)
		value, err := url.PathUnescape(val)
		value = strings.TrimSpace(value)
		if err != nil || key == "" || !validHeader(key, value) {
			return errors.New("an entry is not a valid header")
		}
		h.Set(key, value)
	}
	return nil
}

// validHeader is whether key is an HTTP token and value holds no control
// character but a tab.
func validHeader(key, value string) bool {
	for _, c := range []byte(key) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	for _, c := range []byte(value) {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
