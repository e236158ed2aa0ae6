package decrypt

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/keyservice"
)

// TestGnuPGInterop checks that keys and messages made by the gpg binary,
// as users make them, work with the in-process OpenPGP of keyServer. The
// binary is only the test's fixture maker; it is skipped where gpg is
// missing.
func TestGnuPGInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a GnuPG key")
	}
	if _, err := exec.LookPath("gpg"); err != nil {
		t.Skip("no gpg binary")
	}
	// A short path: gpg-agent's socket lives in GNUPGHOME and socket paths
	// are limited to about 100 bytes.
	home, err := os.MkdirTemp("", "gpg")
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GNUPGHOME="+home)
	t.Cleanup(func() {
		kill := exec.Command("gpgconf", "--kill", "gpg-agent")
		kill.Env = env
		_ = kill.Run()
		_ = os.RemoveAll(home)
	})
	gpg := func(stdin []byte, args ...string) []byte {
		t.Helper()
		cmd := exec.Command("gpg", append([]string{"--batch", "--pinentry-mode", "loopback", "--passphrase", ""}, args...)...)
		cmd.Env = env
		cmd.Stdin = bytes.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Skipf("gpg %s: %v\n%s", args[0], err, stderr.String())
		}
		return out
	}
	gpg(nil, "--quick-gen-key", "weir test <test@weir.invalid>", "default", "default", "never")
	var fp string
	for _, line := range strings.Split(string(gpg(nil, "--list-secret-keys", "--with-colons")), "\n") {
		if f := strings.Split(line, ":"); len(f) > 9 && f[0] == "fpr" {
			fp = f[9]
			break
		}
	}
	if fp == "" {
		t.Fatal("no fingerprint listed")
	}
	armored := gpg(nil, "--armor", "--export-secret-keys", fp)
	d := mustNew(t, map[string][]byte{"gpg.asc": armored})

	t.Run("message encrypted by gpg", func(t *testing.T) {
		dataKey := make([]byte, 32)
		if _, err := rand.Read(dataKey); err != nil {
			t.Fatal(err)
		}
		msg := gpg(dataKey, "--armor", "--trust-model", "always", "--encrypt", "--recipient", fp)
		resp, err := d.server.Decrypt(context.Background(), &keyservice.DecryptRequest{
			Key:        &keyservice.Key{KeyType: &keyservice.Key_PgpKey{PgpKey: &keyservice.PgpKey{Fingerprint: fp}}},
			Ciphertext: msg,
		})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(resp.GetPlaintext(), dataKey) {
			t.Error("data key differs")
		}
	})

	t.Run("SOPS document for a gpg key", func(t *testing.T) {
		doc, err := d.encryptPGP([]byte(plainSecret), FormatYAML, []string{fp}, SecretEncryptedRegex)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.DecryptObject(object(t, doc))
		if err != nil {
			t.Fatal(err)
		}
		if v := got.Object["stringData"].(map[string]any)["password"]; v != secretValue {
			t.Errorf("password = %v", v)
		}
	})
}
