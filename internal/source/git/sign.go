package git

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"golang.org/x/crypto/ssh"
)

// Signer makes the armored signature stored in a commit's gpgsig header
// from the commit object's encoding. It has the shape of go-git's
// CommitOptions.Signer, so any Signer is also a go-git one and go-git's
// own signers (and test doubles) can be passed to Checkout.Commit.
type Signer interface {
	Sign(message io.Reader) ([]byte, error)
}

// pgpSigner signs with one decrypted OpenPGP key.
type pgpSigner struct {
	entity *openpgp.Entity
	keyID  uint64 // the primary key or subkey that signs
}

// NewPGPSigner reads an armored or binary OpenPGP key ring holding secret
// keys and signs with the key keyID names (16 hex digits, the long key ID,
// or a 40-digit fingerprint, either with an optional 0x) or, when keyID is
// empty, with the first key able to sign. An ID naming a primary key that
// may not sign selects that key's signing subkey, as gpg does. An
// encrypted key is decrypted with passphrase. Signatures are armored and
// detached, as `git commit -S` makes them.
func NewPGPSigner(keyRing []byte, passphrase, keyID string) (Signer, error) {
	entities, err := readPGPKeyRing(keyRing)
	if err != nil {
		return nil, err
	}
	want, err := parsePGPKeyID(keyID)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	for _, e := range entities {
		key, ok := pgpSigningKey(e, want, now)
		if !ok {
			continue
		}
		id := key.PublicKey.KeyIdString()
		if key.PrivateKey == nil || key.PrivateKey.Dummy() {
			if want != 0 {
				return nil, invalidf("pgp key %s has no secret key in the key ring", id)
			}
			continue
		}
		if key.PrivateKey.Encrypted {
			if passphrase == "" {
				return nil, invalidf("pgp key %s is encrypted and no passphrase was given", id)
			}
			if err := key.PrivateKey.Decrypt([]byte(passphrase)); err != nil {
				// go-crypto names the failure, never the passphrase.
				return nil, invalidf("decrypt pgp key %s: %v", id, err)
			}
		}
		return &pgpSigner{entity: e, keyID: key.PublicKey.KeyId}, nil
	}
	if want != 0 {
		return nil, invalidf("pgp key ring has no valid signing key %s", keyID)
	}
	return nil, invalidf("pgp key ring has no secret key that can sign")
}

func readPGPKeyRing(keyRing []byte) (openpgp.EntityList, error) {
	var (
		entities openpgp.EntityList
		err      error
	)
	if bytes.Contains(keyRing, []byte("-----BEGIN PGP")) {
		entities, err = openpgp.ReadArmoredKeyRing(bytes.NewReader(keyRing))
	} else {
		entities, err = openpgp.ReadKeyRing(bytes.NewReader(keyRing))
	}
	if err != nil {
		return nil, invalidf("read pgp key ring: %v", err)
	}
	return entities, nil
}

// parsePGPKeyID reads a long key ID or fingerprint into the 64-bit key ID
// (the fingerprint's last 8 bytes for v4 keys); 0 when keyID is empty.
func parsePGPKeyID(keyID string) (uint64, error) {
	s := strings.TrimPrefix(strings.TrimPrefix(strings.ReplaceAll(keyID, " ", ""), "0x"), "0X")
	switch len(s) {
	case 0:
		return 0, nil
	case 16:
	case 40:
		s = s[24:]
	default:
		return 0, invalidf("pgp key id %q is not 16 hex digits (long id) or a 40-digit fingerprint", keyID)
	}
	id, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return 0, invalidf("pgp key id %q is not hexadecimal", keyID)
	}
	return id, nil
}

// pgpSigningKey picks e's key for id (any signing key when id is 0).
func pgpSigningKey(e *openpgp.Entity, id uint64, now time.Time) (openpgp.Key, bool) {
	key, ok := e.SigningKeyById(now, id)
	if !ok && id != 0 && e.PrimaryKey.KeyId == id {
		key, ok = e.SigningKey(now)
	}
	return key, ok
}

func (s *pgpSigner) Sign(message io.Reader) ([]byte, error) {
	var buf bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&buf, s.entity, message, &packet.Config{SigningKeyId: s.keyID}); err != nil {
		return nil, fmt.Errorf("pgp sign: %w", err)
	}
	return buf.Bytes(), nil
}

// sshSigner signs in OpenSSH's SSHSIG format.
type sshSigner struct {
	signer ssh.Signer
	// namespace is SSHSignatureNamespace unless a test signs for another.
	namespace string
}

// sshSigHashAlg is the message hash of SSH signatures: ssh-keygen's
// default, which git uses.
const sshSigHashAlg = "sha512"

// NewSSHSigner signs with an OpenSSH private key (PEM; decrypted with
// passphrase when encrypted) in the format `git commit -S` makes with
// gpg.format=ssh: an armored SSHSIG blob ("-----BEGIN SSH SIGNATURE-----")
// for namespace "git", hash sha512, RSA keys signing with rsa-sha2-512.
func NewSSHSigner(privateKeyPEM, passphrase []byte) (Signer, error) {
	signer, err := ssh.ParsePrivateKey(privateKeyPEM)
	var missing *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &missing) && len(passphrase) == 0:
		return nil, invalidf("ssh signing key is encrypted and no passphrase was given")
	case errors.As(err, &missing):
		signer, err = ssh.ParsePrivateKeyWithPassphrase(privateKeyPEM, passphrase)
		if err != nil {
			return nil, invalidf("decrypt ssh signing key: %v", err)
		}
	case err != nil:
		return nil, invalidf("ssh signing key is not an OpenSSH private key: %v", err)
	}
	return &sshSigner{signer: signer, namespace: SSHSignatureNamespace}, nil
}

func (s *sshSigner) Sign(message io.Reader) ([]byte, error) {
	payload, err := io.ReadAll(message)
	if err != nil {
		return nil, fmt.Errorf("read message to sign: %w", err)
	}
	signed, err := sshSignedData(s.namespace, sshSigHashAlg, payload)
	if err != nil {
		return nil, err
	}
	var sig *ssh.Signature
	if as, ok := s.signer.(ssh.AlgorithmSigner); ok && s.signer.PublicKey().Type() == ssh.KeyAlgoRSA {
		// OpenSSH refuses SHA-1 (ssh-rsa) signatures in SSHSIG.
		sig, err = as.SignWithAlgorithm(rand.Reader, signed, ssh.KeyAlgoRSASHA512)
	} else {
		sig, err = s.signer.Sign(rand.Reader, signed)
	}
	if err != nil {
		return nil, fmt.Errorf("ssh sign: %w", err)
	}
	blob := binary.BigEndian.AppendUint32([]byte(sshsigMagic), 1)
	blob = append(blob, ssh.Marshal(struct {
		PublicKey []byte
		Namespace string
		Reserved  []byte
		HashAlg   string
		Signature []byte
	}{s.signer.PublicKey().Marshal(), s.namespace, nil, sshSigHashAlg, ssh.Marshal(sig)})...)
	return pem.EncodeToMemory(&pem.Block{Type: "SSH SIGNATURE", Bytes: blob}), nil
}
