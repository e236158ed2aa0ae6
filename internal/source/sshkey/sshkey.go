package sshkey

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/crypto/ssh"
)

// PublicKeySecretKey is the Secret key that holds the public half of a
// generated key, the deploy key to register with the Git host (the flux
// CLI's name for it).
const PublicKeySecretKey = "identity.pub"

// Options shape a generated key pair. The zero value is not valid; start
// from DefaultOptions.
type Options struct {
	// Algorithm is rsa, ecdsa or ed25519.
	Algorithm string
	// RSABits is the RSA modulus size.
	RSABits int
	// Curve is the ECDSA curve: p256, p384 or p521.
	Curve string
}

// DefaultOptions are the flux CLI's defaults: ECDSA P-384 (RSA 2048 when
// the algorithm is switched to rsa).
func DefaultOptions() Options { return Options{Algorithm: "ecdsa", RSABits: 2048, Curve: "p384"} }

var (
	algorithms = []string{"rsa", "ecdsa", "ed25519"}
	curves     = map[string]elliptic.Curve{"p256": elliptic.P256(), "p384": elliptic.P384(), "p521": elliptic.P521()}
)

// BindFlags registers --ssh-key-algorithm, --ssh-rsa-bits and
// --ssh-ecdsa-curve on fs; values are checked as they are parsed.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.Var(choice{&o.Algorithm, "SSH public key algorithm", algorithms}, "ssh-key-algorithm", "SSH public key algorithm")
	fs.Var((*rsaBits)(&o.RSABits), "ssh-rsa-bits", "SSH RSA public key bit size (multiplies of 8, min 1024)")
	fs.Var(choice{&o.Curve, "SSH ECDSA public key curve", []string{"p256", "p384", "p521"}}, "ssh-ecdsa-curve", "SSH ECDSA public key curve")
}

// KeyPair is a generated key in the forms a Git Secret carries it.
type KeyPair struct {
	// PrivateKeyPEM is the private key in OpenSSH PEM form ("identity").
	PrivateKeyPEM []byte
	// AuthorizedKey is the public key in authorized_keys form
	// ("identity.pub"), newline-terminated.
	AuthorizedKey []byte
}

// Generate makes a new key pair.
func Generate(o Options) (KeyPair, error) {
	var (
		key crypto.Signer
		err error
	)
	switch o.Algorithm {
	case "rsa":
		if err := checkRSABits(o.RSABits); err != nil {
			return KeyPair{}, err
		}
		key, err = rsa.GenerateKey(rand.Reader, o.RSABits)
	case "ed25519":
		_, key, err = ed25519.GenerateKey(rand.Reader)
	case "ecdsa":
		curve, ok := curves[o.Curve]
		if !ok {
			return KeyPair{}, fmt.Errorf("unsupported SSH ECDSA public key curve %q", o.Curve)
		}
		key, err = ecdsa.GenerateKey(curve, rand.Reader)
	default:
		return KeyPair{}, fmt.Errorf("unsupported SSH public key algorithm %q", o.Algorithm)
	}
	if err != nil {
		return KeyPair{}, fmt.Errorf("key pair generation failed, error: %w", err)
	}
	block, err := ssh.MarshalPrivateKey(key, "")
	if err != nil {
		return KeyPair{}, fmt.Errorf("encoding the private key: %w", err)
	}
	pub, err := ssh.NewPublicKey(key.Public())
	if err != nil {
		return KeyPair{}, fmt.Errorf("encoding the public key: %w", err)
	}
	return KeyPair{PrivateKeyPEM: pem.EncodeToMemory(block), AuthorizedKey: ssh.MarshalAuthorizedKey(pub)}, nil
}

// choice is a string flag restricted to a list of values.
type choice struct {
	value   *string
	what    string
	allowed []string
}

func (c choice) String() string {
	if c.value == nil {
		return ""
	}
	return *c.value
}
func (c choice) Type() string { return strings.Join(c.allowed, "|") }
func (c choice) Set(s string) error {
	if !slices.Contains(c.allowed, s) {
		return fmt.Errorf("unsupported %s '%s', must be one of: %s", c.what, s, strings.Join(c.allowed, ", "))
	}
	*c.value = s
	return nil
}

// rsaBits is --ssh-rsa-bits.
type rsaBits int

func (b *rsaBits) String() string { return strconv.Itoa(int(*b)) }
func (b *rsaBits) Type() string   { return "rsaKeyBits" }
func (b *rsaBits) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return err
	}
	if err := checkRSABits(n); err != nil {
		return err
	}
	*b = rsaBits(n)
	return nil
}

func checkRSABits(n int) error {
	if n < 1024 || n%8 != 0 {
		return fmt.Errorf("RSA key bit size must be a multiple of 8 and at least 1024")
	}
	return nil
}
