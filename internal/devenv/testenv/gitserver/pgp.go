package gitserver

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
)

// PGPKey is an OpenPGP commit signing key for tests, armored as Secrets
// carry it: Private for a signing Secret's git.asc, Public for a
// verification Secret's *.asc.
type PGPKey struct {
	Private, Public []byte
}

// GeneratePGPKey makes a fresh unencrypted key for name <email>.
func GeneratePGPKey(t testing.TB, name, email string) PGPKey {
	t.Helper()
	e, err := openpgp.NewEntity(name, "", email, nil)
	if err != nil {
		t.Fatalf("generate pgp key: %v", err)
	}
	armored := func(kind string, write func(io.Writer) error) []byte {
		var b bytes.Buffer
		w, err := armor.Encode(&b, kind, nil)
		if err == nil {
			err = write(w)
		}
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			t.Fatalf("armor pgp key: %v", err)
		}
		return b.Bytes()
	}
	return PGPKey{
		Private: armored(openpgp.PrivateKeyType, func(w io.Writer) error { return e.SerializePrivate(w, nil) }),
		Public:  armored(openpgp.PublicKeyType, e.Serialize),
	}
}

// VerifyCommitPGP checks hash with `git verify-commit` in the repository
// at gitDir (a bare repository or a .git directory), gpg trusting key only.
func VerifyCommitPGP(t testing.TB, gitDir, hash string, key PGPKey) {
	t.Helper()
	home, err := os.MkdirTemp("", "gpg") // short: gpg's socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(home) })
	env := append(os.Environ(), "GNUPGHOME="+home)
	imp := exec.Command("gpg", "--batch", "--quiet", "--import")
	imp.Env, imp.Stdin = env, bytes.NewReader(key.Public)
	if out, err := imp.CombinedOutput(); err != nil {
		t.Fatalf("gpg --import: %v\n%s", err, out)
	}
	verify := exec.Command("git", "--git-dir", gitDir, "verify-commit", "-v", hash)
	verify.Env = env
	out, err := verify.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Good signature") {
		t.Errorf("git verify-commit %s: %v\n%s", hash, err, out)
	}
}
