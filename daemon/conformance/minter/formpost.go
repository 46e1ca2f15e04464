package minter

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// ClientAssertionType is RFC 7523's client_assertion_type for a JWT.
const ClientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// FormPostDriver drives a token endpoint of ShapeFormPost: each case's mint
// values are posted as a form to Endpoint (the token endpoint's URL), the
// client authenticated by an ES256 private-key JWT (RFC 7523 section 2.2:
// iss and sub the client id, aud the token endpoint, a fresh jti, a
// five-minute exp), and the token is the JSON answer's access_token.
type FormPostDriver struct {
	Endpoint string
	ClientID string
	// KeyID is the kid of the assertion's header; omitted when empty.
	KeyID string
	// Key is the client's private key, its public half registered with the
	// STS for ClientID.
	Key    *ecdsa.PrivateKey
	Client *http.Client
}

// LoadClientKey reads a PEM file holding a P-256 private key (PKCS #8 or
// SEC 1).
func LoadClientKey(path string) (*ecdsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("minter: %s holds no PEM block", path)
	}
	if k, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
		return p256(k, path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("minter: %s: %w", path, err)
	}
	ec, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("minter: %s is not an EC key", path)
	}
	return p256(ec, path)
}

func p256(k *ecdsa.PrivateKey, path string) (*ecdsa.PrivateKey, error) {
	if k.Curve != elliptic.P256() {
		return nil, fmt.Errorf("minter: %s is not a P-256 key (ES256)", path)
	}
	return k, nil
}

// MintToken posts the case's form with the client's assertion as its
// client_auth says.
func (d *FormPostDriver) MintToken(ctx context.Context, c *Case) (string, error) {
	form := url.Values{}
	for k, v := range c.Mint {
		form.Set(k, fmt.Sprint(v))
	}
	form.Set("client_id", d.ClientID)
	if c.ClientAuth != ClientAuthNone {
		assertion, err := d.assertion(c.ClientAuth)
		if err != nil {
			return "", err
		}
		form.Set("client_assertion_type", ClientAssertionType)
		form.Set("client_assertion", assertion)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.Endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	body, err := exchange(d.Client, req)
	if err != nil {
		return "", err
	}
	var answer struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || answer.AccessToken == "" {
		return "", errors.New("the token endpoint's answer holds no access_token")
	}
	if !strings.EqualFold(answer.TokenType, "Bearer") {
		return "", fmt.Errorf("the token endpoint's token_type is %q, not Bearer", clip(answer.TokenType))
	}
	return answer.AccessToken, nil
}

// MintGrant: a token endpoint mints tokens; suites of this shape hold no
// grant case (Suite.Validate).
func (d *FormPostDriver) MintGrant(context.Context, *Case) (string, error) {
	return "", errors.New("the form-post shape mints no grants")
}

// assertion is the client's JWT, spoilt as how says.
func (d *FormPostDriver) assertion(how string) (string, error) {
	key, aud, now := d.Key, d.Endpoint, time.Now()
	if key == nil {
		return "", errors.New("no client key to sign the client assertion with")
	}
	switch how {
	case ClientAuthForeignKey:
		foreign, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return "", err
		}
		key = foreign
	case ClientAuthExpired:
		now = now.Add(-10 * time.Minute)
	case ClientAuthWrongAudience:
		aud += "/elsewhere"
	}
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", err
	}
	header := map[string]string{"alg": "ES256", "typ": "JWT"}
	if d.KeyID != "" {
		header["kid"] = d.KeyID
	}
	claims := map[string]any{
		"iss": d.ClientID, "sub": d.ClientID, "aud": aud, "jti": hex.EncodeToString(jti),
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
	}
	return signES256(key, header, claims)
}

// signES256 is the compact JWS of claims (RFC 7515, RFC 7518 section 3.4).
func signES256(key *ecdsa.PrivateKey, header map[string]string, claims map[string]any) (string, error) {
	h, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	p, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(p)
	sum := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, key, sum[:])
	if err != nil {
		return "", err
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + enc.EncodeToString(sig), nil
}
