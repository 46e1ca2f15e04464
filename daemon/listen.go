package garmd

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/garm-dev/garm/daemon/internal/admin"
)

// listenerTLSProblems are the problems of --tls-cert, --tls-key and
// --tls-client-ca.
func (c Config) listenerTLSProblems() []string {
	var problems []string
	if (c.TLSCert == "") != (c.TLSKey == "") {
		problems = append(problems, "--tls-cert and --tls-key go together: the listeners' certificate needs its key")
	}
	if c.TLSClientCA != "" && c.TLSCert == "" {
		problems = append(problems, "--tls-client-ca needs --tls-cert and --tls-key: client certificates are asked for over TLS")
	}
	if c.TLSCert != "" && c.TLSKey != "" {
		if _, err := c.listenerTLS(); err != nil {
			problems = append(problems, err.Error())
		}
	}
	return problems
}

// listenerTLS is the TLS configuration of the tool plane and the admin
// listener, or nil without --tls-cert. HTTP/2 is offered first.
func (c Config) listenerTLS() (*tls.Config, error) {
	if c.TLSCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s and --tls-key %s: %w", c.TLSCert, c.TLSKey, err)
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"h2", "http/1.1"},
	}
	if c.TLSClientCA != "" {
		pem, err := os.ReadFile(c.TLSClientCA)
		if err != nil {
			return nil, fmt.Errorf("--tls-client-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-client-ca %s holds no PEM certificate", c.TLSClientCA)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// secureListeners puts the tool plane and the admin listener behind TLS
// when --tls-cert is given, with HTTP/2 on the plane; without it, a
// listener beyond loopback is warned about in one line naming the flag.
func (d *Daemon) secureListeners(plane *http.Server) error {
	cfg, err := d.cfg.listenerTLS()
	if err != nil {
		return err
	}
	if cfg == nil {
		for _, l := range []struct {
			flag string
			l    net.Listener
		}{{"--listen", d.plane}, {"--admin-listen", d.adminL}} {
			if !admin.IsLoopback(l.l.Addr()) {
				d.logger.Warn("garmd: "+l.flag+" is plaintext beyond loopback; serve it over TLS with --tls-cert and --tls-key", "addr", l.l.Addr().String())
			}
		}
		return nil
	}
	if plane == nil {
		return errors.New("no tool plane to secure")
	}
	// Serve configures HTTP/2 itself when the server's TLS configuration
	// offers h2 and the listener speaks TLS.
	plane.TLSConfig = cfg
	d.plane = tls.NewListener(d.plane, cfg)
	adminCfg := cfg.Clone()
	adminCfg.NextProtos = []string{"http/1.1"} // the admin server speaks HTTP/1.1 only
	d.adminL = tls.NewListener(d.adminL, adminCfg)
	return nil
}

// scheme is the listeners' URL scheme, for the report.
func (c Config) scheme() string {
	if c.TLSCert != "" {
		return "https://"
	}
	return "http://"
}
