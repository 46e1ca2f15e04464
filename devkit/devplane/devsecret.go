package devplane

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/garm-dev/garm/internal/atomicfile"
)

// DevSecretHeader is the header every request to the dev endpoint carries
// the run's secret in. A custom header also keeps a web page from sending
// it without a CORS preflight, which the endpoint never grants.
const DevSecretHeader = "Garm-Dev-Secret"

// refusedSecret is the dev endpoint's only answer without the secret.
const refusedSecret = "the dev endpoint answers only requests that carry this run's secret in the " + DevSecretHeader + " header; garm call reads it from the file the plane wrote\n"

// DevSecretFile is the file the plane whose dev endpoint answers at devURL
// writes the run's secret to, and `garm call` reads it from: one file per
// address, under the user's cache directory (os.UserCacheDir), in a
// directory and a file only the user reads.
func DevSecretFile(devURL string) (string, error) {
	u, err := url.Parse(devURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("the dev endpoint %q is not a URL", devURL)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("the dev endpoint's secret: %w", err)
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, u.Host)
	return filepath.Join(cache, "garm", "dev", name+".secret"), nil
}

// ReadDevSecret is the secret in the file DevSecretFile names, or in path
// when it is given.
func ReadDevSecret(devURL, path string) (string, error) {
	if path == "" {
		var err error
		if path, err = DevSecretFile(devURL); err != nil {
			return "", err
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("the dev endpoint's secret: %w", err)
	}
	secret := strings.TrimSpace(string(data))
	if secret == "" {
		return "", fmt.Errorf("the dev endpoint's secret: %s is empty", path)
	}
	return secret, nil
}

// writeDevSecret makes a secret for this run and writes it to the file
// DevSecretFile names for devURL, readable only by its owner, replacing
// one a plane killed before it could remove its own left there. It
// answers the secret and the file.
func writeDevSecret(devURL string) (secret, path string, err error) {
	if path, err = DevSecretFile(devURL); err != nil {
		return "", "", err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	// MkdirAll leaves a directory that was there as it was.
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", "", err
	}
	key := make([]byte, 32)
	rand.Read(key) // never fails: crypto/rand crashes the program rather than return an error
	secret = hex.EncodeToString(key)
	// Written whole: a reader never sees half.
	if err := atomicfile.Write(path, []byte(secret+"\n"), 0o600); err != nil {
		return "", "", err
	}
	return secret, path, nil
}

// requireDevSecret serves next only to a request that carries secret in
// DevSecretHeader, compared in constant time; any other is answered 401
// with a fixed body that says nothing of the endpoint.
func requireDevSecret(secret string, next http.Handler) http.Handler {
	want := []byte(secret)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get(DevSecretHeader)), want) != 1 {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(refusedSecret))
			return
		}
		w.Header().Set("Cache-Control", "private, no-store")
		next.ServeHTTP(w, r)
	})
}
