package signed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/signature"
)

// keysFetchTimeout bounds one read of the key set from a URL.
const keysFetchTimeout = 10 * time.Second

// Keys is the catalogue key set at a file path or an http(s) URL. It is
// read afresh for every pair the gate considers — at start and for each
// artifact or envelope that changed — and never cached: a key added is
// trusted from the next pair on, a key removed untrusted from the next pair
// on, and a pair is rare enough that reading a small document for it costs
// nothing. A key set that cannot be read or parsed refuses nothing and
// admits nothing: the caller keeps what it serves and asks again.
type Keys struct {
	location string
	client   *http.Client
}

// NewKeys is the key set at location: an http:// or https:// URL, else a
// file path. client nil is http.DefaultClient.
func NewKeys(location string, client *http.Client) *Keys {
	if client == nil {
		client = http.DefaultClient
	}
	return &Keys{location: location, client: client}
}

// String is the key set's location.
func (k *Keys) String() string { return k.location }

// IsURL reports whether location is read over HTTP rather than from a file.
func IsURL(location string) bool {
	return strings.HasPrefix(location, "https://") || strings.HasPrefix(location, "http://")
}

// Load reads and parses the key set.
func (k *Keys) Load(ctx context.Context) (*signature.KeySet, error) {
	data, err := k.read(ctx)
	if err != nil {
		return nil, fmt.Errorf("catalogue keys %s: %w", k.location, err)
	}
	set, err := signature.ParseKeySet(data)
	if err != nil {
		return nil, fmt.Errorf("catalogue keys %s: %w", k.location, err)
	}
	return set, nil
}

func (k *Keys) read(ctx context.Context) ([]byte, error) {
	if !IsURL(k.location) {
		f, err := os.Open(k.location)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readBounded(f)
	}
	ctx, cancel := context.WithTimeout(ctx, keysFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.location, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the endpoint answered %s", resp.Status)
	}
	return readBounded(resp.Body)
}

var errTooLarge = fmt.Errorf("the key set is larger than %d bytes", signature.MaxKeySetBytes)

func readBounded(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, signature.MaxKeySetBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > signature.MaxKeySetBytes {
		return nil, errTooLarge
	}
	return data, nil
}

// ErrKeys marks a key set that could not be read or does not meet the
// policy: nothing was judged.
var ErrKeys = errors.New("the catalogue key set cannot be used")
