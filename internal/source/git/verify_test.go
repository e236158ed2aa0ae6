package git

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"golang.org/x/crypto/ssh"

	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

func sshSignerFor(t *testing.T, key any) ssh.Signer {
	t.Helper()
	s, err := ssh.NewSignerFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newPGPEntity(t *testing.T, name string) (*openpgp.Entity, []byte) {
	t.Helper()
	// EdDSA: quick to generate.
	e, err := openpgp.NewEntity(name, "", name+"@weir.invalid", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return e, buf.Bytes()
}

func TestVerifySSHSignature(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ed, err := ssh.ParsePrivateKey(gitserver.GenerateClientKey(t).PrivateKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	untrusted, err := ssh.ParsePrivateKey(gitserver.GenerateClientKey(t).PrivateKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor a <a@b> 0 +0000\n\nmessage\n")

	for name, signer := range map[string]ssh.Signer{"ed25519": ed, "rsa": sshSignerFor(t, rsaKey), "ecdsa": sshSignerFor(t, ecKey)} {
		t.Run(name, func(t *testing.T) {
			sig, err := (&sshSigner{signer: signer, namespace: SSHSignatureNamespace}).Sign(bytes.NewReader(payload))
			if err != nil {
				t.Fatal(err)
			}
			keys := []ssh.PublicKey{untrusted.PublicKey(), signer.PublicKey()}
			got, err := verifySSH(sig, payload, keys)
			if err != nil || got != ssh.FingerprintSHA256(signer.PublicKey()) {
				t.Fatalf("verifySSH = %q, %v", got, err)
			}
			if _, err := verifySSH(sig, append(payload, '!'), keys); !errors.Is(err, ErrVerification) {
				t.Errorf("tampered payload: error = %v, want ErrVerification", err)
			}
			if _, err := verifySSH(sig, payload, keys[:1]); !errors.Is(err, ErrVerification) || !strings.Contains(err.Error(), "untrusted") {
				t.Errorf("untrusted key: error = %v", err)
			}
			other, _ := (&sshSigner{signer: signer, namespace: "file"}).Sign(bytes.NewReader(payload))
			if _, err := verifySSH(other, payload, keys); !errors.Is(err, ErrVerification) || !strings.Contains(err.Error(), "namespace") {
				t.Errorf("namespace file: error = %v", err)
			}
		})
	}

	t.Run("malformed", func(t *testing.T) {
		for _, sig := range []string{
			"-----BEGIN SSH SIGNATURE-----\nbm90IHNzaHNpZw==\n-----END SSH SIGNATURE-----\n",
			"-----BEGIN SSH SIGNATURE-----\n!!!\n-----END SSH SIGNATURE-----\n",
			"-----BEGIN SSH SIGNATURE-----\nU1NIU0lHAAAAAg==\n-----END SSH SIGNATURE-----\n", // version 2
		} {
			if _, err := verifySSH([]byte(sig), payload, []ssh.PublicKey{ed.PublicKey()}); !errors.Is(err, ErrVerification) {
				t.Errorf("verifySSH(%q) error = %v, want ErrVerification", sig, err)
			}
		}
	})
}

// TestSSHSigSignerMatchesOpenSSH checks the test signer (and so the format
// the verifier is tested against) with ssh-keygen itself.
func TestSSHSigSignerMatchesOpenSSH(t *testing.T) {
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Skip("ssh-keygen not installed")
	}
	key := gitserver.GenerateClientKey(t)
	signer, err := ssh.ParsePrivateKey(key.PrivateKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte("some commit\n")
	sig, err := (&sshSigner{signer: signer, namespace: SSHSignatureNamespace}).Sign(bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sigFile := filepath.Join(dir, "sig")
	if err := os.WriteFile(sigFile, sig, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(keygen, "-Y", "check-novalidate", "-n", "git", "-s", sigFile)
	cmd.Stdin = bytes.NewReader(payload)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen rejects the test signature: %v: %s", err, out)
	}

	// And the other way round: ssh-keygen's signature verifies here.
	keyFile := filepath.Join(dir, "id")
	if err := os.WriteFile(keyFile, key.PrivateKeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	msgFile := filepath.Join(dir, "msg")
	if err := os.WriteFile(msgFile, payload, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(keygen, "-Y", "sign", "-n", "git", "-f", keyFile, msgFile).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen sign: %v: %s", err, out)
	}
	opensshSig, err := os.ReadFile(msgFile + ".sig")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verifySSH(opensshSig, payload, []ssh.PublicKey{key.PublicKey}); err != nil {
		t.Errorf("verifySSH(ssh-keygen signature): %v", err)
	}
}

func TestVerifyClonedObjects(t *testing.T) {
	srv := gitserver.New(t, gitserver.Options{Username: "git", Password: secretPassword})
	srv.InitRepo(t, "signed.git")
	r := srv.Remote("signed.git")
	u := srv.HTTPURL("signed.git")

	pgpKey, pgpPub := newPGPEntity(t, "trusted")
	_, otherPub := newPGPEntity(t, "other")
	sshKey := gitserver.GenerateClientKey(t)
	sshKeySigner, err := ssh.ParsePrivateKey(sshKey.PrivateKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	otherSSH := gitserver.GenerateClientKey(t)

	push(t, r, change{Parent: "main", Files: map[string]string{"a": "1"}, Refs: []string{"refs/heads/main"},
		SignKey: pgpKey, AnnotatedTags: []string{"v1.0.0"}, TagSignKey: pgpKey})
	push(t, r, change{Parent: "main", Files: map[string]string{"a": "2"}, Refs: []string{"refs/heads/ssh"},
		Signer: &sshSigner{signer: sshKeySigner, namespace: SSHSignatureNamespace}})
	push(t, r, change{Parent: "main", Files: map[string]string{"a": "3"}, Refs: []string{"refs/heads/plain", "refs/tags/light"},
		AnnotatedTags: []string{"unsigned"}})

	remote := NewClient().Remote(testContext(t), u, mustAuth(t, u, basicSecret()))
	clone := func(t *testing.T, ref Reference) *Commit {
		t.Helper()
		c, err := remote.Clone(t.TempDir(), CloneOptions{Reference: ref})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	keyRing := func(t *testing.T, data map[string][]byte) *KeyRing {
		t.Helper()
		kr, err := NewKeyRing(data)
		if err != nil {
			t.Fatal(err)
		}
		return kr
	}
	trusted := keyRing(t, map[string][]byte{"author.asc": pgpPub, "author.sshpub": sshKey.AuthorizedKey, "README": []byte("ignored")})
	others := keyRing(t, map[string][]byte{"other.asc": otherPub, "other.sshpub": otherSSH.AuthorizedKey})
	pgpID := pgpKey.PrimaryKey.KeyIdString()
	sshID := ssh.FingerprintSHA256(sshKey.PublicKey)

	t.Run("pgp commit", func(t *testing.T) {
		c := clone(t, Reference{Branch: "main"})
		if !bytes.HasPrefix(c.Signature, []byte(pgpArmorBegin)) {
			t.Fatalf("signature = %q", c.Signature)
		}
		if id, err := VerifyCommit(c, trusted); err != nil || id != pgpID {
			t.Errorf("VerifyCommit = %q, %v; want %s", id, err, pgpID)
		}
		if _, err := VerifyCommit(c, others); !errors.Is(err, ErrVerification) {
			t.Errorf("VerifyCommit with other key: error = %v, want ErrVerification", err)
		}
		if _, err := VerifyCommit(c, keyRing(t, map[string][]byte{"only.sshpub": sshKey.AuthorizedKey})); !errors.Is(err, ErrVerification) {
			t.Errorf("VerifyCommit with only ssh keys: error = %v", err)
		}
	})
	t.Run("pgp tag and head", func(t *testing.T) {
		c := clone(t, Reference{Tag: "v1.0.0"})
		if id, err := VerifyTag(c.Tag, trusted); err != nil || id != pgpID {
			t.Errorf("VerifyTag = %q, %v", id, err)
		}
		if id, err := VerifyCommit(c, trusted); err != nil || id != pgpID {
			t.Errorf("VerifyCommit = %q, %v", id, err)
		}
		if _, err := VerifyTag(c.Tag, others); !errors.Is(err, ErrVerification) {
			t.Errorf("VerifyTag with other key: %v", err)
		}
	})
	t.Run("ssh commit", func(t *testing.T) {
		c := clone(t, Reference{Branch: "ssh"})
		if id, err := VerifyCommit(c, trusted); err != nil || id != sshID {
			t.Errorf("VerifyCommit = %q, %v; want %s", id, err, sshID)
		}
		if _, err := VerifyCommit(c, others); !errors.Is(err, ErrVerification) {
			t.Errorf("VerifyCommit with other key: error = %v", err)
		}
	})
	t.Run("unsigned", func(t *testing.T) {
		c := clone(t, Reference{Tag: "unsigned"})
		if _, err := VerifyCommit(c, trusted); !errors.Is(err, ErrVerification) || !strings.Contains(err.Error(), "not signed") {
			t.Errorf("VerifyCommit = %v, want not signed", err)
		}
		if _, err := VerifyTag(c.Tag, trusted); !errors.Is(err, ErrVerification) {
			t.Errorf("VerifyTag = %v", err)
		}
		light := clone(t, Reference{Tag: "light"})
		if _, err := VerifyTag(light.Tag, trusted); !errors.Is(err, ErrVerification) || !strings.Contains(err.Error(), "not an annotated tag") {
			t.Errorf("VerifyTag(lightweight) = %v", err)
		}
	})
	t.Run("git cli ssh signatures", func(t *testing.T) {
		if _, err := exec.LookPath("ssh-keygen"); err != nil {
			t.Skip("ssh-keygen not installed")
		}
		dir := t.TempDir()
		keyFile := filepath.Join(dir, "signing-key")
		if err := os.WriteFile(keyFile, sshKey.PrivateKeyPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		work := filepath.Join(dir, "work")
		withCreds := strings.Replace(u, "://", "://git:"+secretPassword+"@", 1)
		runGit(t, dir, "clone", "-q", "--branch", "plain", withCreds, work)
		cfg := []string{"-c", "gpg.format=ssh", "-c", "user.signingkey=" + keyFile}
		runGit(t, work, append(cfg, "commit", "-q", "-S", "--allow-empty", "-m", "signed by git")...)
		runGit(t, work, append(cfg, "tag", "-s", "-m", "signed tag", "v2.0.0")...)
		runGit(t, work, "push", "-q", withCreds, "HEAD:refs/heads/cli", "refs/tags/v2.0.0")

		c := clone(t, Reference{Tag: "v2.0.0"})
		if !bytes.HasPrefix(c.Signature, []byte(sshArmorBegin)) || !bytes.HasPrefix(c.Tag.Signature, []byte(sshArmorBegin)) {
			t.Fatalf("commit signature %q, tag signature %q", c.Signature, c.Tag.Signature)
		}
		if id, err := VerifyCommit(c, trusted); err != nil || id != sshID {
			t.Errorf("VerifyCommit(git commit -S) = %q, %v", id, err)
		}
		if id, err := VerifyTag(c.Tag, trusted); err != nil || id != sshID {
			t.Errorf("VerifyTag(git tag -s) = %q, %v", id, err)
		}
		if _, err := VerifyTag(c.Tag, others); !errors.Is(err, ErrVerification) {
			t.Errorf("VerifyTag with other key: %v", err)
		}
	})
}

func TestNewKeyRing(t *testing.T) {
	_, pub := newPGPEntity(t, "a")
	key := gitserver.GenerateClientKey(t)
	two := append(append([]byte("# team keys\n"), key.AuthorizedKey...), gitserver.GenerateClientKey(t).AuthorizedKey...)
	tests := []struct {
		name    string
		data    map[string][]byte
		pgp     int
		ssh     int
		wantErr string
	}{
		{name: "pgp and ssh", data: map[string][]byte{"a.asc": pub, "b.sshpub": key.AuthorizedKey}, pgp: 1, ssh: 1},
		{name: "several ssh keys in one entry", data: map[string][]byte{"team.sshpub": two}, ssh: 2},
		{name: "nothing usable", data: map[string][]byte{"README": []byte("x")}, wantErr: "no .asc or .sshpub keys"},
		{name: "bad asc", data: map[string][]byte{"a.asc": []byte("junk")}, wantErr: `"a.asc"`},
		{name: "bad sshpub", data: map[string][]byte{"a.sshpub": []byte("junk")}, wantErr: `"a.sshpub"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kr, err := NewKeyRing(tt.data)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want ErrInvalidConfig containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(kr.pgp) != tt.pgp || len(kr.ssh) != tt.ssh {
				t.Errorf("keys: %d pgp, %d ssh; want %d, %d", len(kr.pgp), len(kr.ssh), tt.pgp, tt.ssh)
			}
		})
	}
}

func TestVerifyRejectsSeveralSignatures(t *testing.T) {
	kr := &KeyRing{ssh: []ssh.PublicKey{gitserver.GenerateClientKey(t).PublicKey}}
	sig := []byte(sshArmorBegin + "\nAAAA\n-----END SSH SIGNATURE-----\n" + pgpArmorBegin + "\nAAAA\n-----END PGP SIGNATURE-----\n")
	if _, err := VerifyCommit(&Commit{Signature: sig}, kr); !errors.Is(err, ErrVerification) || !strings.Contains(err.Error(), "2 signatures") {
		t.Errorf("error = %v, want two signatures refused", err)
	}
}
