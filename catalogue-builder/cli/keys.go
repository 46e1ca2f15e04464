package cli

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/garm-dev/garm/catalogue-builder/signature"
	"github.com/garm-dev/garm/internal/atomicfile"
)

// runKeygen writes a new catalogue-signing private key, readable by its
// owner only, and prints its public JWK (or writes it to --public).
func runKeygen(_ context.Context, e *env, args []string) int {
	fs := e.flags("keygen")
	keyPath := fs.String("key", "", "write the private key (PEM, PKCS#8) to this `file`, created with mode 0600; an existing file is never overwritten")
	publicPath := fs.String("public", "", "write the public JWK to this `file` instead of stdout")
	alg := fs.String("alg", signature.AlgEdDSA, "the key's `algorithm`: "+signature.AlgEdDSA+" (Ed25519) or "+signature.AlgES256+" (ECDSA P-256)")
	group := fs.String("group", "", "the signers' `group` the public JWK names (owners, security, …)")
	if _, code := e.parse(fs, args, 0); code >= 0 {
		return code
	}
	if *keyPath == "" {
		fmt.Fprintf(e.stderr, "%s keygen: --key is required\n", e.prog)
		return ExitUsage
	}
	s, pemBytes, err := signature.GenerateKey(*alg)
	if err != nil {
		fmt.Fprintf(e.stderr, "%s keygen: %v\n", e.prog, err)
		return ExitUsage
	}
	jwk, err := signature.PublicJWK(s.Public(), *group)
	if err != nil {
		fmt.Fprintf(e.stderr, "%s keygen: %v\n", e.prog, err)
		return ExitUsage
	}
	public, err := json.MarshalIndent(jwk, "", "  ")
	if err != nil {
		return e.refuse("keygen", err)
	}
	public = append(public, '\n')
	if err := atomicfile.Create(*keyPath, pemBytes, 0o600); err != nil {
		return e.refuse("keygen", fmt.Errorf("%w; no key written", err))
	}
	if *publicPath == "" {
		_, _ = e.stdout.Write(public)
	} else if err := atomicfile.Write(*publicPath, public, 0o644); err != nil {
		return e.refuse("keygen", fmt.Errorf("the private key is in %s but its public key was not written: %w", *keyPath, err))
	} else {
		fmt.Fprintf(e.stdout, "wrote %s and %s\n", *keyPath, *publicPath)
	}
	fmt.Fprintf(e.stderr, "key id %s (%s)\n", s.KeyID(), s.Alg())
	return ExitOK
}

const keysUsage = "[--group G] <public key>... [--group G2 <public key>...] [-o catalogue-keys.json]"

// runKeys writes the catalogue key set garmd verifies with from public
// keys: JWK files from keygen, PEM public keys, or key sets (whose groups
// are kept unless a --group is in force). --group names the group of the
// files after it.
func runKeys(_ context.Context, e *env, args []string) int {
	var (
		group, out string
		keys       []map[string]any
		files      int
	)
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		switch {
		case arg == "-h" || arg == "-help" || arg == "--help":
			fmt.Fprintf(e.stdout, "Usage: %s keys %s\n\nWrite the catalogue key set (JWKS) garmd's --catalogue-keys reads.\n", e.prog, keysUsage)
			return ExitOK
		case strings.HasPrefix(arg, "-") && (name == "group" || name == "o"):
			if !hasValue {
				if i+1 == len(args) {
					fmt.Fprintf(e.stderr, "%s keys: %s needs a value\n", e.prog, arg)
					return ExitUsage
				}
				i++
				value = args[i]
			}
			if name == "group" {
				group = value
			} else {
				out = value
			}
		case strings.HasPrefix(arg, "-") && arg != "-":
			fmt.Fprintf(e.stderr, "%s keys: unknown flag %s\n\nUsage: %s keys %s\n", e.prog, arg, e.prog, keysUsage)
			return ExitUsage
		default:
			files++
			read, err := readPublicKeys(arg, group)
			if err != nil {
				return e.refuse("keys", fmt.Errorf("%s: %w", arg, err))
			}
			keys = append(keys, read...)
		}
	}
	if files == 0 {
		fmt.Fprintf(e.stderr, "%s keys: name at least one public key\n\nUsage: %s keys %s\n", e.prog, e.prog, keysUsage)
		return ExitUsage
	}
	data, err := signature.MarshalKeySet(keys)
	if err != nil {
		return e.refuse("keys", err)
	}
	if out == "" {
		_, _ = e.stdout.Write(data)
		return ExitOK
	}
	if err := atomicfile.Write(out, data, 0o644); err != nil {
		return e.refuse("keys", err)
	}
	fmt.Fprintf(e.stdout, "wrote %s (%s)\n", out, plural(len(keys), "key"))
	return ExitOK
}

// readPublicKeys reads one file of public keys as catalogue JWKs in group
// (a key set's own groups are kept when group is empty).
func readPublicKeys(path, group string) ([]map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if block, _ := pem.Decode(data); block != nil {
		if block.Type != "PUBLIC KEY" {
			return nil, fmt.Errorf("a PEM %q block; want a PUBLIC KEY (a private key never goes into a key set)", block.Type)
		}
		pub, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		j, err := signature.PublicJWK(pub, group)
		if err != nil {
			return nil, err
		}
		return []map[string]any{j}, nil
	}
	trimmed := bytes.TrimSpace(data)
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &probe); err != nil {
		return nil, errors.New("neither a PEM public key nor a JWK or JWK set")
	}
	if _, isSet := probe["keys"]; !isSet {
		// One JWK: read it as a one-key set, so it passes every check a
		// set's key does.
		trimmed = []byte(`{"keys":[` + string(trimmed) + `]}`)
	}
	set, err := signature.ParseKeySet(trimmed)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, k := range set.Keys() {
		g := k.Group
		if group != "" {
			g = group
		}
		j, err := signature.PublicJWK(k.Public(), g)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}
