package artifact

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"
)

// Algorithm names a digest algorithm as it appears before the colon of an
// artifact digest and in --artifact-digest-algo.
type Algorithm string

// The algorithms weir computes. Flux also accepts blake3; weir refuses it
// with an error rather than silently writing a different algorithm.
const (
	SHA256 Algorithm = "sha256"
	SHA384 Algorithm = "sha384"
	SHA512 Algorithm = "sha512"
)

// DefaultAlgorithm is the --artifact-digest-algo default.
const DefaultAlgorithm = SHA256

// ParseAlgorithm validates a --artifact-digest-algo value; empty means the
// default.
func ParseAlgorithm(s string) (Algorithm, error) {
	switch a := Algorithm(strings.ToLower(strings.TrimSpace(s))); a {
	case "":
		return DefaultAlgorithm, nil
	case SHA256, SHA384, SHA512:
		return a, nil
	default:
		return "", fmt.Errorf("unsupported digest algorithm %q: want one of sha256, sha384, sha512", s)
	}
}

func (a Algorithm) newHash() (hash.Hash, error) {
	switch a {
	case SHA256:
		return sha256.New(), nil
	case SHA384:
		return sha512.New384(), nil
	case SHA512:
		return sha512.New(), nil
	default:
		return nil, fmt.Errorf("unsupported digest algorithm %q", string(a))
	}
}

// digester hashes what is written to it and renders "<algorithm>:<hex>".
type digester struct {
	alg Algorithm
	h   hash.Hash
}

func newDigester(a Algorithm) (*digester, error) {
	h, err := a.newHash()
	if err != nil {
		return nil, err
	}
	return &digester{alg: a, h: h}, nil
}

func (d *digester) Write(p []byte) (int, error) { return d.h.Write(p) }

func (d *digester) String() string {
	return string(d.alg) + ":" + hex.EncodeToString(d.h.Sum(nil))
}

// ParseDigest splits "<algorithm>:<hex>" and checks that the hex has the
// length the algorithm produces.
func ParseDigest(s string) (Algorithm, string, error) {
	alg, hexPart, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", fmt.Errorf("digest %q: missing algorithm prefix", s)
	}
	a := Algorithm(alg)
	h, err := a.newHash()
	if err != nil {
		return "", "", fmt.Errorf("digest %q: %w", s, err)
	}
	if len(hexPart) != 2*h.Size() {
		return "", "", fmt.Errorf("digest %q: want %d hex characters, got %d", s, 2*h.Size(), len(hexPart))
	}
	if _, err := hex.DecodeString(hexPart); err != nil {
		return "", "", fmt.Errorf("digest %q: %w", s, err)
	}
	return a, strings.ToLower(hexPart), nil
}

// Digest returns "<algorithm>:<hex>" of everything r yields.
func Digest(a Algorithm, r io.Reader) (string, error) {
	d, err := newDigester(a)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(d, r); err != nil {
		return "", fmt.Errorf("computing %s digest: %w", a, err)
	}
	return d.String(), nil
}
