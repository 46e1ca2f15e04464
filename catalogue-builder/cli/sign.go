package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/signature"
	"github.com/garm-dev/garm/internal/atomicfile"
)

// signFlags are the flags sign and build --sign-key share.
type signFlags struct {
	key, name, envelope string
	version             uint64
}

func runSign(_ context.Context, e *env, args []string) int {
	fs := e.flags("sign")
	sf := &signFlags{}
	fs.StringVar(&sf.key, "key", "", "the signer's private key `file` (PEM, from keygen)")
	fs.Uint64Var(&sf.version, "version", 0, "the catalogue's version `number`, above every version published before; a second signer may omit it")
	fs.StringVar(&sf.name, "name", "", "the catalogue's `name`, which garmd serves under; a second signer may omit it")
	fs.StringVar(&sf.envelope, "envelope", "", "the envelope `file` to write or add to (default: the artifact's path with "+signature.EnvelopeSuffix+")")
	pos, code := e.parse(fs, args, 1)
	if code >= 0 {
		return code
	}
	if sf.key == "" {
		fmt.Fprintf(e.stderr, "%s sign: --key is required\n", e.prog)
		return ExitUsage
	}
	a, err := artifact.ReadFile(pos[0])
	if err != nil {
		return e.refuse("sign", fmt.Errorf("%w; nothing signed", err))
	}
	return e.sign(sf, pos[0], a.Digest, "sign", false)
}

// sign signs digest (the artifact at path's) with sf.key into the
// envelope beside it: a new statement when there is no envelope, another
// signature over the same statement when there is one. With fresh (build,
// which has just written a new artifact), an envelope over another
// artifact is replaced instead of refused.
func (e *env) sign(sf *signFlags, path, digest, cmd string, fresh bool) int {
	keyPEM, err := os.ReadFile(sf.key)
	if err != nil {
		return e.refuse(cmd, err)
	}
	signer, err := signature.LoadSigner(keyPEM)
	if err != nil {
		return e.refuse(cmd, fmt.Errorf("--key %s: %w", sf.key, err))
	}
	envPath := sf.envelope
	if envPath == "" {
		envPath = signature.EnvelopeLocation(path)
	}
	env, err := envelopeToSign(sf, envPath, digest, fresh)
	if err != nil {
		return e.refuse(cmd, fmt.Errorf("%w; nothing signed", err))
	}
	if env == nil {
		st := signature.Statement{Catalogue: sf.name, Digest: digest, Version: sf.version, SignedAt: time.Now()}
		if env, err = signature.Sign(st, signer); err != nil {
			return e.refuse(cmd, fmt.Errorf("%w; nothing signed", err))
		}
	} else if err := signature.AddSignature(env, signer); err != nil {
		return e.refuse(cmd, fmt.Errorf("%s: %w; nothing signed", envPath, err))
	}
	out, err := env.Marshal()
	if err != nil {
		return e.refuse(cmd, err)
	}
	if err := atomicfile.Write(envPath, out, 0o644); err != nil {
		return e.refuse(cmd, fmt.Errorf("%w; nothing signed", err))
	}
	st := env.Statement
	fmt.Fprintf(e.stdout, "signed %s %s version %d as %s (%s) in %s (%s)\n",
		st.Catalogue, st.Digest, st.Version, signer.KeyID(), signer.Alg(), envPath, plural(len(env.Signatures), "signature"))
	return ExitOK
}

// envelopeToSign is the envelope already at envPath for the artifact
// digest, or nil when there is none (and the flags can start one). An
// envelope over another artifact, or whose statement the flags contradict,
// is refused: a signer adds to the statement others signed or starts none.
func envelopeToSign(sf *signFlags, envPath, digest string, fresh bool) (*signature.Envelope, error) {
	data, err := os.ReadFile(envPath)
	stale := false
	if err == nil && fresh {
		if old, perr := signature.Parse(data); perr != nil || old.Statement.Digest != digest {
			stale = true
		}
	}
	if errors.Is(err, fs.ErrNotExist) || stale {
		var missing []string
		if sf.version == 0 {
			missing = append(missing, "--version")
		}
		if sf.name == "" {
			missing = append(missing, "--name")
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("the first signer names the statement: %v required", missing)
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	env, err := signature.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envPath, err)
	}
	st := env.Statement
	switch {
	case st.Digest != digest:
		return nil, fmt.Errorf("%s signs another artifact (%s, not %s); remove it to start a new statement", envPath, st.Digest, digest)
	case sf.version != 0 && sf.version != st.Version:
		return nil, fmt.Errorf("%s states version %d, not --version %d: the statement differs", envPath, st.Version, sf.version)
	case sf.name != "" && sf.name != st.Catalogue:
		return nil, fmt.Errorf("%s states catalogue %s, not --name %s: the statement differs", envPath, st.Catalogue, sf.name)
	}
	return env, nil
}

// noteStaleEnvelope warns when an unsigned build left an envelope beside
// the artifact that signs another one: publishing the pair would be
// refused by every garmd that verifies.
func (e *env) noteStaleEnvelope(path, digest string) {
	envPath := signature.EnvelopeLocation(path)
	data, err := os.ReadFile(envPath)
	if err != nil {
		return
	}
	if env, err := signature.Parse(data); err == nil && env.Statement.Digest == digest {
		return
	}
	fmt.Fprintf(e.stderr, "note: %s does not sign the artifact just built; sign it (sign --key …) or remove it before publishing\n", envPath)
}
