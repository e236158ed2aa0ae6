package git

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"golang.org/x/crypto/ssh"

	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

// pgpTestKey is an OpenPGP key pair for signing tests (EdDSA: quick to make).
type pgpTestKey struct {
	entity    *openpgp.Entity
	publicASC []byte // armored public key, for NewKeyRing
}

func newPGPTestKey(t *testing.T, name string) pgpTestKey {
	t.Helper()
	e, pub := newPGPEntity(t, name)
	return pgpTestKey{entity: e, publicASC: pub}
}

// privateRing serialises the secret keys of entities into one binary key
// ring, encrypted with passphrase when it is not empty.
func privateRing(t *testing.T, passphrase string, entities ...*openpgp.Entity) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, e := range entities {
		if err := e.SerializePrivate(&buf, nil); err != nil {
			t.Fatal(err)
		}
	}
	if passphrase == "" {
		return buf.Bytes()
	}
	// Re-read to encrypt a copy: the test keeps the decrypted entities.
	copies, err := openpgp.ReadKeyRing(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	for _, e := range copies {
		if err := e.EncryptPrivateKeys([]byte(passphrase), nil); err != nil {
			t.Fatal(err)
		}
		if err := e.SerializePrivateWithoutSigning(&buf, nil); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func armorRing(t *testing.T, binary []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PrivateKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(binary); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestSignedCommitRoundTrip(t *testing.T) {
	srv, _ := writeFixture(t)
	srv.InitRepo(t, "signed.git")
	u := srv.HTTPURL("signed.git")
	auth := mustAuth(t, u, basicSecret())

	pgp1, pgp2 := newPGPTestKey(t, "first"), newPGPTestKey(t, "second")
	publicOnly := newPGPTestKey(t, "public")
	var withPublicFirst bytes.Buffer
	if err := publicOnly.entity.Serialize(&withPublicFirst); err != nil {
		t.Fatal(err)
	}
	withPublicFirst.Write(privateRing(t, "", pgp1.entity))

	ed := gitserver.GenerateClientKey(t)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaBlock, err := ssh.MarshalPrivateKey(rsaKey, "")
	if err != nil {
		t.Fatal(err)
	}
	rsaSSH, err := ssh.NewSignerFromKey(rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecBlock, err := ssh.MarshalPrivateKeyWithPassphrase(ecKey, "", []byte(secretPassword))
	if err != nil {
		t.Fatal(err)
	}
	ecSSH, err := ssh.NewSignerFromKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}

	trusted, err := NewKeyRing(map[string][]byte{
		"first.asc": pgp1.publicASC, "second.asc": pgp2.publicASC,
		"ed.sshpub":  ed.AuthorizedKey,
		"rsa.sshpub": ssh.MarshalAuthorizedKey(rsaSSH.PublicKey()), "ec.sshpub": ssh.MarshalAuthorizedKey(ecSSH.PublicKey()),
	})
	if err != nil {
		t.Fatal(err)
	}
	others, err := NewKeyRing(map[string][]byte{"other.asc": publicOnly.publicASC, "other.sshpub": gitserver.GenerateClientKey(t).AuthorizedKey})
	if err != nil {
		t.Fatal(err)
	}

	pgpSigner := func(ring []byte, pass, id string) func(*testing.T) Signer {
		return func(t *testing.T) Signer {
			s, err := NewPGPSigner(ring, pass, id)
			if err != nil {
				t.Fatalf("NewPGPSigner: %v", err)
			}
			return s
		}
	}
	sshSigner := func(pemKey []byte, pass string) func(*testing.T) Signer {
		return func(t *testing.T) Signer {
			s, err := NewSSHSigner(pemKey, []byte(pass))
			if err != nil {
				t.Fatalf("NewSSHSigner: %v", err)
			}
			return s
		}
	}
	pgp2Fingerprint := "0x" + strings.ToUpper(hex.EncodeToString(pgp2.entity.PrimaryKey.Fingerprint))

	tests := []struct {
		name   string
		signer func(*testing.T) Signer
		wantID string
		pgp    bool
	}{
		{name: "pgp armored", signer: pgpSigner(armorRing(t, privateRing(t, "", pgp1.entity)), "", ""), wantID: pgp1.entity.PrimaryKey.KeyIdString(), pgp: true},
		{name: "pgp first secret key", signer: pgpSigner(withPublicFirst.Bytes(), "", ""), wantID: pgp1.entity.PrimaryKey.KeyIdString(), pgp: true},
		{name: "pgp encrypted by key id", signer: pgpSigner(privateRing(t, secretPassword, pgp1.entity, pgp2.entity), secretPassword, pgp2.entity.PrimaryKey.KeyIdString()), wantID: pgp2.entity.PrimaryKey.KeyIdString(), pgp: true},
		{name: "pgp by fingerprint", signer: pgpSigner(armorRing(t, privateRing(t, "", pgp1.entity, pgp2.entity)), "", pgp2Fingerprint), wantID: pgp2.entity.PrimaryKey.KeyIdString(), pgp: true},
		{name: "ssh ed25519", signer: sshSigner(ed.PrivateKeyPEM, ""), wantID: ssh.FingerprintSHA256(ed.PublicKey)},
		{name: "ssh rsa", signer: sshSigner(pem.EncodeToMemory(rsaBlock), ""), wantID: ssh.FingerprintSHA256(rsaSSH.PublicKey())},
		{name: "ssh encrypted ecdsa", signer: sshSigner(pem.EncodeToMemory(ecBlock), secretPassword), wantID: ssh.FingerprintSHA256(ecSSH.PublicKey())},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			branch := "signed-" + string(rune('a'+i))
			c := mustOpen(t, u, auth, branch)
			if err := c.WriteFile("signed.txt", []byte(tt.name)); err != nil {
				t.Fatal(err)
			}
			hash, err := c.Commit("signed commit\n\nby "+tt.name, testAuthor, tt.signer(t))
			if err != nil {
				t.Fatalf("Commit: %v", err)
			}
			if err := c.Push(testContext(t)); err != nil {
				t.Fatalf("Push: %v", err)
			}
			commit, err := NewClient().Remote(testContext(t), u, auth).Clone(t.TempDir(), CloneOptions{Reference: Reference{Branch: branch}})
			if err != nil {
				t.Fatalf("Clone: %v", err)
			}
			if commit.Hash != hash {
				t.Fatalf("cloned %s, committed %s", commit.Hash, hash)
			}
			if id, err := VerifyCommit(commit, trusted); err != nil || id != tt.wantID {
				t.Errorf("VerifyCommit = %q, %v; want %s", id, err, tt.wantID)
			}
			if _, err := VerifyCommit(commit, others); !errors.Is(err, ErrVerification) {
				t.Errorf("VerifyCommit with other keys = %v, want ErrVerification", err)
			}
			tampered := *commit
			tampered.Encoded = bytes.Replace(commit.Encoded, []byte("signed commit"), []byte("signed c0mmit"), 1)
			if _, err := VerifyCommit(&tampered, trusted); !errors.Is(err, ErrVerification) {
				t.Errorf("VerifyCommit of a tampered commit = %v, want ErrVerification", err)
			}
			gitVerifyCommit(t, srv, branch, hash, tt.pgp, trusted)
		})
	}
}

// gitVerifyCommit checks the pushed signature with `git verify-commit`,
// when git's helpers (gpg or ssh-keygen) are installed.
func gitVerifyCommit(t *testing.T, srv *gitserver.Server, branch, hash string, pgp bool, kr *KeyRing) {
	t.Helper()
	dir := t.TempDir()
	var cfg []string
	if pgp {
		gpg, err := exec.LookPath("gpg")
		if err != nil {
			t.Log("gpg not installed: git verify-commit skipped")
			return
		}
		home := filepath.Join(dir, "gnupg")
		if err := os.Mkdir(home, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Setenv("GNUPGHOME", home)
		for _, e := range kr.pgp {
			var buf bytes.Buffer
			if err := e.Serialize(&buf); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(gpg, "--batch", "--quiet", "--import")
			cmd.Stdin = &buf
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("gpg --import: %v: %s", err, out)
			}
		}
	} else {
		if _, err := exec.LookPath("ssh-keygen"); err != nil {
			t.Log("ssh-keygen not installed: git verify-commit skipped")
			return
		}
		var allowed bytes.Buffer
		for _, k := range kr.ssh {
			allowed.WriteString(testAuthor.Email + " " + string(ssh.MarshalAuthorizedKey(k)))
		}
		file := filepath.Join(dir, "allowed_signers")
		if err := os.WriteFile(file, allowed.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg = []string{"-c", "gpg.format=ssh", "-c", "gpg.ssh.allowedSignersFile=" + file}
	}
	work := filepath.Join(dir, "work")
	withCreds := strings.Replace(srv.HTTPURL("signed.git"), "://", "://git:"+secretPassword+"@", 1)
	runGit(t, dir, "clone", "-q", "--branch", branch, withCreds, work)
	runGit(t, work, append(cfg, "verify-commit", hash)...)
}

func TestNewPGPSignerErrors(t *testing.T) {
	key := newPGPTestKey(t, "k")
	encrypted := privateRing(t, secretPassword, key.entity)
	tests := []struct {
		name       string
		ring       []byte
		passphrase string
		keyID      string
		wantMsg    string
	}{
		{name: "junk", ring: []byte("not a key"), wantMsg: "read pgp key ring"},
		{name: "public keys only", ring: key.publicASC, wantMsg: "no secret key that can sign"},
		{name: "public key by id", ring: key.publicASC, keyID: key.entity.PrimaryKey.KeyIdString(), wantMsg: "has no secret key"},
		{name: "encrypted without passphrase", ring: encrypted, wantMsg: "no passphrase"},
		{name: "wrong passphrase", ring: encrypted, passphrase: "wrong-SECRET", wantMsg: "decrypt pgp key"},
		{name: "unknown key id", ring: encrypted, passphrase: secretPassword, keyID: "0123456789ABCDEF", wantMsg: "no valid signing key 0123456789ABCDEF"},
		{name: "malformed key id", ring: encrypted, passphrase: secretPassword, keyID: "1234", wantMsg: "not 16 hex digits"},
		{name: "non-hex key id", ring: encrypted, passphrase: secretPassword, keyID: "0123456789ABCDEG", wantMsg: "not hexadecimal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewPGPSigner(tt.ring, tt.passphrase, tt.keyID)
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("NewPGPSigner = %v, want ErrInvalidConfig containing %q", err, tt.wantMsg)
			}
			if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), secretPassword) {
				t.Errorf("error shows the passphrase: %v", err)
			}
		})
	}
}

func TestNewSSHSignerErrors(t *testing.T) {
	encrypted := encryptedKey(t, secretPassword)
	tests := []struct {
		name       string
		key        []byte
		passphrase string
		wantMsg    string
	}{
		{name: "junk", key: []byte("not a key"), wantMsg: "not an OpenSSH private key"},
		{name: "public key", key: gitserver.GenerateClientKey(t).AuthorizedKey, wantMsg: "not an OpenSSH private key"},
		{name: "encrypted without passphrase", key: encrypted, wantMsg: "no passphrase"},
		{name: "wrong passphrase", key: encrypted, passphrase: "wrong-SECRET", wantMsg: "decrypt ssh signing key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewSSHSigner(tt.key, []byte(tt.passphrase))
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("NewSSHSigner = %v, want ErrInvalidConfig containing %q", err, tt.wantMsg)
			}
			if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Errorf("error shows secret material: %v", err)
			}
		})
	}
}
