package git

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"golang.org/x/crypto/ssh"
)

// Suffixes of the verification Secret's keys.
const (
	// KeySuffixPGP marks armored OpenPGP public keys.
	KeySuffixPGP = ".asc"
	// KeySuffixSSH marks SSH public keys in authorized_keys format, one or
	// more per value.
	KeySuffixSSH = ".sshpub"
)

// SSHSignatureNamespace is the namespace git signs commits and tags in.
const SSHSignatureNamespace = "git"

// KeyRing holds the public keys signatures are checked against.
type KeyRing struct {
	pgp openpgp.EntityList
	ssh []ssh.PublicKey
}

// NewKeyRing reads a verification Secret: every *.asc value is an armored
// OpenPGP key ring, every *.sshpub value holds SSH public keys; other keys
// are ignored. At least one key is required.
func NewKeyRing(data map[string][]byte) (*KeyRing, error) {
	kr := &KeyRing{}
	for _, name := range slices.Sorted(maps.Keys(data)) {
		switch {
		case strings.HasSuffix(name, KeySuffixPGP):
			entities, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(data[name]))
			if err != nil {
				return nil, invalidf("verification secret key %q is not an armored PGP key ring: %v", name, err)
			}
			kr.pgp = append(kr.pgp, entities...)
		case strings.HasSuffix(name, KeySuffixSSH):
			keys, err := parseSSHPublicKeys(data[name])
			if err != nil {
				return nil, invalidf("verification secret key %q: %v", name, err)
			}
			kr.ssh = append(kr.ssh, keys...)
		}
	}
	if len(kr.pgp) == 0 && len(kr.ssh) == 0 {
		return nil, invalidf("verification secret has no %s or %s keys", KeySuffixPGP, KeySuffixSSH)
	}
	return kr, nil
}

func parseSSHPublicKeys(data []byte) ([]ssh.PublicKey, error) {
	var keys []ssh.PublicKey
	for rest := data; len(bytes.TrimSpace(rest)) > 0; {
		key, _, _, next, err := ssh.ParseAuthorizedKey(rest)
		if err != nil {
			if len(keys) > 0 {
				break // only comments and blank lines left
			}
			return nil, fmt.Errorf("no SSH public key in authorized_keys format: %w", err)
		}
		keys = append(keys, key)
		rest = next
	}
	if len(keys) == 0 {
		return nil, errors.New("no SSH public key")
	}
	return keys, nil
}

// VerifyCommit checks c's signature against kr and returns the identity of
// the key that made it: the PGP primary key ID (16 hex digits) or the SSH
// key's SHA256 fingerprint.
func VerifyCommit(c *Commit, kr *KeyRing) (string, error) {
	id, err := verifySignature(c.Signature, c.Encoded, kr)
	if err != nil {
		return "", fmt.Errorf("commit %s: %w", c.Hash, err)
	}
	return id, nil
}

// VerifyTag checks an annotated tag's signature against kr, as VerifyCommit
// does for commits. A nil tag (lightweight tag, branch) fails: modes Tag
// and TagAndHEAD need a signed annotated tag.
func VerifyTag(t *Tag, kr *KeyRing) (string, error) {
	if t == nil {
		return "", fmt.Errorf("%w: the reference is not an annotated tag", ErrVerification)
	}
	id, err := verifySignature(t.Signature, t.Encoded, kr)
	if err != nil {
		return "", fmt.Errorf("tag %s: %w", t.Name, err)
	}
	return id, nil
}

const (
	pgpArmorBegin = "-----BEGIN PGP SIGNATURE-----"
	sshArmorBegin = "-----BEGIN SSH SIGNATURE-----"
)

func verifySignature(sig, payload []byte, kr *KeyRing) (string, error) {
	if kr == nil {
		return "", fmt.Errorf("%w: no keys to verify with", ErrVerification)
	}
	sig = bytes.TrimSpace(sig)
	if len(sig) == 0 {
		return "", fmt.Errorf("%w: not signed", ErrVerification)
	}
	if n := bytes.Count(sig, []byte("\n-----BEGIN ")) + 1; n > 1 {
		return "", fmt.Errorf("%w: %d signatures, exactly one is accepted", ErrVerification, n)
	}
	switch {
	case bytes.HasPrefix(sig, []byte(pgpArmorBegin)):
		return verifyPGP(sig, payload, kr.pgp)
	case bytes.HasPrefix(sig, []byte(sshArmorBegin)):
		return verifySSH(sig, payload, kr.ssh)
	default:
		return "", fmt.Errorf("%w: unsupported signature format (only PGP and SSH)", ErrVerification)
	}
}

func verifyPGP(sig, payload []byte, keys openpgp.EntityList) (string, error) {
	if len(keys) == 0 {
		return "", fmt.Errorf("%w: PGP signature but no %s keys", ErrVerification, KeySuffixPGP)
	}
	signer, err := openpgp.CheckArmoredDetachedSignature(keys, bytes.NewReader(payload), bytes.NewReader(sig), nil)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrVerification, err)
	}
	return signer.PrimaryKey.KeyIdString(), nil
}

// sshSig is a parsed SSHSIG blob (OpenSSH PROTOCOL.sshsig).
type sshSig struct {
	publicKey ssh.PublicKey
	namespace string
	hashAlg   string
	signature *ssh.Signature
}

const sshsigMagic = "SSHSIG"

func parseSSHSig(armored []byte) (*sshSig, error) {
	block, _ := pem.Decode(armored)
	if block == nil || block.Type != "SSH SIGNATURE" {
		return nil, errors.New("malformed SSH signature armor")
	}
	b, ok := bytes.CutPrefix(block.Bytes, []byte(sshsigMagic))
	if !ok || len(b) < 4 {
		return nil, errors.New("SSH signature lacks the SSHSIG preamble")
	}
	if v := binary.BigEndian.Uint32(b); v != 1 {
		return nil, fmt.Errorf("SSH signature version %d is not supported", v)
	}
	var blob struct {
		PublicKey []byte
		Namespace string
		Reserved  []byte
		HashAlg   string
		Signature []byte
	}
	if err := ssh.Unmarshal(b[4:], &blob); err != nil {
		return nil, fmt.Errorf("malformed SSH signature: %w", err)
	}
	pub, err := ssh.ParsePublicKey(blob.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("SSH signature public key: %w", err)
	}
	var sig struct {
		Format string
		Blob   []byte
		Rest   []byte `ssh:"rest"`
	}
	if err := ssh.Unmarshal(blob.Signature, &sig); err != nil {
		return nil, fmt.Errorf("malformed SSH signature value: %w", err)
	}
	return &sshSig{
		publicKey: pub,
		namespace: blob.Namespace,
		hashAlg:   blob.HashAlg,
		signature: &ssh.Signature{Format: sig.Format, Blob: sig.Blob, Rest: sig.Rest},
	}, nil
}

// sshSignedData is what an SSHSIG signature covers: the preamble, the
// namespace, the reserved field, the hash algorithm and the message hash.
func sshSignedData(namespace, hashAlg string, payload []byte) ([]byte, error) {
	var digest []byte
	switch hashAlg {
	case "sha256":
		h := sha256.Sum256(payload)
		digest = h[:]
	case "sha512":
		h := sha512.Sum512(payload)
		digest = h[:]
	default:
		return nil, fmt.Errorf("SSH signature hash algorithm %q is not sha256 or sha512", hashAlg)
	}
	return append([]byte(sshsigMagic), ssh.Marshal(struct {
		Namespace string
		Reserved  []byte
		HashAlg   string
		Hash      []byte
	}{namespace, nil, hashAlg, digest})...), nil
}

// verifySSH checks an SSHSIG signature of payload, in git's namespace, against keys.
func verifySSH(armored, payload []byte, keys []ssh.PublicKey) (string, error) {
	const namespace = SSHSignatureNamespace
	if len(keys) == 0 {
		return "", fmt.Errorf("%w: SSH signature but no %s keys", ErrVerification, KeySuffixSSH)
	}
	sig, err := parseSSHSig(armored)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrVerification, err)
	}
	if sig.namespace != namespace {
		return "", fmt.Errorf("%w: SSH signature namespace %q, want %q", ErrVerification, sig.namespace, namespace)
	}
	if _, ok := sig.publicKey.(*ssh.Certificate); ok {
		return "", fmt.Errorf("%w: SSH certificate signatures are not supported", ErrVerification)
	}
	fingerprint := ssh.FingerprintSHA256(sig.publicKey)
	if !slices.ContainsFunc(keys, func(k ssh.PublicKey) bool { return keysEqual(k, sig.publicKey) }) {
		return "", fmt.Errorf("%w: signed by untrusted SSH key %s", ErrVerification, fingerprint)
	}
	if sig.publicKey.Type() == ssh.KeyAlgoRSA && sig.signature.Format == ssh.KeyAlgoRSA {
		// OpenSSH refuses SHA-1 RSA signatures here too.
		return "", fmt.Errorf("%w: ssh-rsa (SHA-1) signatures are not accepted", ErrVerification)
	}
	signed, err := sshSignedData(sig.namespace, sig.hashAlg, payload)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrVerification, err)
	}
	if err := sig.publicKey.Verify(signed, sig.signature); err != nil {
		return "", fmt.Errorf("%w: SSH signature by %s does not match the content: %w", ErrVerification, fingerprint, err)
	}
	return fingerprint, nil
}
