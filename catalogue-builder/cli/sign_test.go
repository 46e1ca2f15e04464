package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/cli"
	"github.com/garm-dev/garm/catalogue-builder/signature"
)

// builtCalculator is the calculator's artifact, built once and copied into
// each test's directory.
var builtCalculator = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "signbuild")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "calc.binpb")
	if code := cli.Main(context.Background(), []string{"build", "-f", calculatorManifest, "-o", path}, io.Discard, io.Discard); code != cli.ExitOK {
		return nil, os.ErrInvalid
	}
	return os.ReadFile(path)
})

// calculatorIn writes the calculator's artifact into dir.
func calculatorIn(t *testing.T, dir string) string {
	t.Helper()
	data, err := builtCalculator()
	if err != nil {
		t.Fatalf("building the calculator: %v", err)
	}
	path := filepath.Join(dir, "calc.binpb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// keygen makes a key in dir and returns the private and public key paths.
func keygen(t *testing.T, dir, name string, extra ...string) (private, public string) {
	t.Helper()
	private, public = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".pub")
	args := append([]string{"keygen", "--key", private, "--public", public}, extra...)
	if code, _, stderr := run(t, args...); code != cli.ExitOK {
		t.Fatalf("keygen: exit %d: %s", code, stderr)
	}
	return private, public
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := run(t, args...)
	if code != cli.ExitOK {
		t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return stdout
}

func TestKeygenWritesAPrivateKeyOnlyItsOwnerReadsAndNeverOverwritesOne(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	private := filepath.Join(dir, "alice.pem")
	code, stdout, stderr := run(t, "keygen", "--key", private, "--alg", "ES256", "--group", "owners")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	info, err := os.Stat(private)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("the private key's mode is %v", info.Mode().Perm())
	}
	var jwk map[string]any
	if err := json.Unmarshal([]byte(stdout), &jwk); err != nil {
		t.Fatalf("stdout is not a JWK: %v\n%s", err, stdout)
	}
	if jwk["use"] != signature.KeyUse || jwk["alg"] != "ES256" || jwk[signature.GroupMember] != "owners" || jwk["d"] != nil {
		t.Errorf("public JWK %v", jwk)
	}
	if !strings.Contains(stderr, jwk["kid"].(string)) {
		t.Errorf("stderr does not name the key id: %s", stderr)
	}
	before, _ := os.ReadFile(private)
	if code, _, _ := run(t, "keygen", "--key", private); code != cli.ExitRefused {
		t.Fatalf("keygen over an existing key: exit %d", code)
	}
	if after, _ := os.ReadFile(private); string(after) != string(before) {
		t.Fatal("keygen replaced an existing key")
	}
}

func TestKeysWritesAKeySetWithGroupsThatVerifiesAndRefusesAPrivateKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	alicePEM, alice := keygen(t, dir, "alice")
	_, bob := keygen(t, dir, "bob", "--alg", "ES256")
	_, carol := keygen(t, dir, "carol")
	set := mustRun(t, "keys", "--group", "owners", alice, bob, "--group=security", carol)
	keys, err := signature.ParseKeySet([]byte(set))
	if err != nil {
		t.Fatalf("%v\n%s", err, set)
	}
	groups := map[string]int{}
	for _, k := range keys.Keys() {
		groups[k.Group]++
	}
	if groups["owners"] != 2 || groups["security"] != 1 {
		t.Errorf("groups %v", groups)
	}
	// Rotation: the set so far, regrouped nothing, plus a new key.
	setPath := filepath.Join(dir, "catalogue-keys.json")
	if err := os.WriteFile(setPath, []byte(set), 0o644); err != nil {
		t.Fatal(err)
	}
	_, dave := keygen(t, dir, "dave")
	next, err := signature.ParseKeySet([]byte(mustRun(t, "keys", setPath, "--group", "owners", dave)))
	if err != nil || len(next.Keys()) != 4 {
		t.Fatalf("the rotated set: %v %v", next, err)
	}
	if code, _, stderr := run(t, "keys", alicePEM); code != cli.ExitRefused || !strings.Contains(stderr, "private key never goes into a key set") {
		t.Fatalf("keys given a private key: exit %d: %s", code, stderr)
	}
	if code, _, _ := run(t, "keys", alice, alice); code != cli.ExitRefused {
		t.Fatalf("keys given one key twice: exit %d", code)
	}
}

func TestASecondSignerAddsToTheStatementAndInspectShowsBoth(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	alicePEM, alice := keygen(t, dir, "alice")
	bobPEM, bob := keygen(t, dir, "bob", "--alg", "ES256")
	setPath := filepath.Join(dir, "keys.json")
	mustRun(t, "keys", "--group", "owners", alice, "--group", "security", bob, "-o", setPath)
	out := filepath.Join(dir, "calc.binpb")
	mustRun(t, "build", "-f", calculatorManifest, "-o", out, "--sign-key", alicePEM, "--version", "5")
	if code, _, stderr := run(t, "sign", out, "--key", bobPEM, "--version", "6"); code != cli.ExitRefused || !strings.Contains(stderr, "statement differs") {
		t.Fatalf("a second signer stating another version: exit %d: %s", code, stderr)
	}
	if code, _, stderr := run(t, "sign", out, "--key", alicePEM); code != cli.ExitRefused || !strings.Contains(stderr, "already signed") {
		t.Fatalf("one key signing twice: exit %d: %s", code, stderr)
	}
	if got := mustRun(t, "sign", out, "--key", bobPEM); !strings.Contains(got, "version 5") || !strings.Contains(got, "2 signatures") {
		t.Fatalf("sign: %s", got)
	}
	var view struct {
		Digest     string
		Signatures struct {
			Catalogue    string
			Version      uint64
			Signers      []struct{ Group, KeyID string } `json:"signers"`
			Verification string
			ThisArtifact bool `json:"this_artifact"`
		}
	}
	if err := json.Unmarshal([]byte(mustRun(t, "inspect", out, "--json", "--catalogue-keys", setPath)), &view); err != nil {
		t.Fatal(err)
	}
	s := view.Signatures
	if s.Catalogue != "calculator" || s.Version != 5 || s.Verification != "verified" || !s.ThisArtifact || len(s.Signers) != 2 {
		t.Fatalf("inspect: %+v", view)
	}
	text := strings.Join(strings.Fields(mustRun(t, "inspect", out)), " ")
	for _, want := range []string{"signatures catalogue calculator version 5", "(this artifact)", "verification not checked"} {
		if !strings.Contains(text, want) {
			t.Errorf("inspect's text lacks %q:\n%s", want, text)
		}
	}
}

func TestSignRefusesAnEnvelopeOverAnotherArtifactAndInspectSeesTheArtifactChanged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	alicePEM, alice := keygen(t, dir, "alice")
	setPath := filepath.Join(dir, "keys.json")
	mustRun(t, "keys", alice, "-o", setPath)
	path := calculatorIn(t, dir)
	mustRun(t, "sign", path, "--key", alicePEM, "--version", "1", "--name", "calculator")
	// The artifact is replaced after signing by another one that reads.
	other := filepath.Join(dir, "other.binpb")
	mustRun(t, "build", "-f", calculatorManifest, "-o", other, "--stamp")
	data, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "sign", path, "--key", alicePEM, "--version", "1"); code != cli.ExitRefused || !strings.Contains(stderr, "signs another artifact") {
		t.Fatalf("sign over a changed artifact: exit %d: %s", code, stderr)
	}
	text := mustRun(t, "inspect", path, "--catalogue-keys", setPath)
	if !strings.Contains(text, "ANOTHER artifact") || !strings.Contains(text, "refused: digest_mismatch") {
		t.Fatalf("inspect of a changed artifact:\n%s", text)
	}
}

func TestTheFirstSignerMustNameTheStatement(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	alicePEM, _ := keygen(t, dir, "alice")
	path := calculatorIn(t, dir)
	code, _, stderr := run(t, "sign", path, "--key", alicePEM)
	if code != cli.ExitRefused || !strings.Contains(stderr, "--version") || !strings.Contains(stderr, "--name") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(signature.EnvelopeLocation(path)); err == nil {
		t.Fatal("an envelope was written")
	}
	if code, _, _ := run(t, "build", "-f", calculatorManifest, "-o", path, "--sign-key", alicePEM); code != cli.ExitUsage {
		t.Fatalf("build --sign-key without --version: exit %d", code)
	}
}

func TestDiffSaysWhichSignersAndVersionsChanged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	alicePEM, alice := keygen(t, dir, "alice")
	bobPEM, bob := keygen(t, dir, "bob")
	setPath := filepath.Join(dir, "keys.json")
	mustRun(t, "keys", "--group", "owners", alice, bob, "-o", setPath)
	oldDir, newDir := filepath.Join(dir, "old"), filepath.Join(dir, "new")
	for _, d := range []string{oldDir, newDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old, updated := calculatorIn(t, oldDir), calculatorIn(t, newDir)
	mustRun(t, "sign", old, "--key", alicePEM, "--version", "3", "--name", "calculator")
	mustRun(t, "sign", updated, "--key", bobPEM, "--version", "4", "--name", "calculator")
	bobKID := keyIDOf(t, bob)
	got := mustRun(t, "diff", old, updated, "--catalogue-keys", setPath)
	for _, want := range []string{"version 3 -> 4", "signer removed " + keyIDOf(t, alice), "signer added   " + bobKID + " (EdDSA, owners)"} {
		if !strings.Contains(got, want) {
			t.Errorf("diff lacks %q:\n%s", want, got)
		}
	}
	back := mustRun(t, "diff", updated, old)
	if !strings.Contains(back, "LOWER") {
		t.Errorf("a lower version is not called out:\n%s", back)
	}
}

func keyIDOf(t *testing.T, publicPath string) string {
	t.Helper()
	data, err := os.ReadFile(publicPath)
	if err != nil {
		t.Fatal(err)
	}
	var jwk struct{ Kid string }
	if err := json.Unmarshal(data, &jwk); err != nil {
		t.Fatal(err)
	}
	return jwk.Kid
}

func TestTheBuilderRefusesATokenKeyAndABrokenEnvelope(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	alicePEM, alice := keygen(t, dir, "alice")
	var jwk map[string]any
	if err := json.Unmarshal(mustReadFile(t, alice), &jwk); err != nil {
		t.Fatal(err)
	}
	jwk["use"] = "sig" // as a token issuer publishes it
	token, err := json.Marshal(map[string]any{"keys": []any{jwk}})
	if err != nil {
		t.Fatal(err)
	}
	tokenPath := filepath.Join(dir, "token-keys.json")
	if err := os.WriteFile(tokenPath, token, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "keys", tokenPath); code != cli.ExitRefused || !strings.Contains(stderr, "not a catalogue-signing key") {
		t.Fatalf("keys given a token key set: exit %d: %s", code, stderr)
	}
	path := calculatorIn(t, dir)
	mustRun(t, "sign", path, "--key", alicePEM, "--version", "1", "--name", "calculator")
	if code, _, stderr := run(t, "inspect", path, "--catalogue-keys", tokenPath); code != cli.ExitRefused || !strings.Contains(stderr, "not a catalogue-signing key") {
		t.Fatalf("inspect with a token key set: exit %d: %s", code, stderr)
	}
	envPath := signature.EnvelopeLocation(path)
	whole := mustReadFile(t, envPath)
	if err := os.WriteFile(envPath, whole[:len(whole)-20], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"inspect", path}, {"sign", path, "--key", alicePEM}, {"publish", path, "s3://catalogues/calc.binpb"}} {
		if code, _, stderr := run(t, args...); code != cli.ExitRefused || !strings.Contains(stderr, "malformed signature envelope") {
			t.Errorf("%s over a truncated envelope: exit %d: %s", args[0], code, stderr)
		}
	}
}
