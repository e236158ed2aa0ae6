package decrypt

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"filippo.io/age"
	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/getsops/sops/v3/keyservice"
)

// Suffixes and names of the decryption Secret's data keys, as in
// kustomize-controller.
const (
	// AgeKeySuffix ends a data key holding age identities.
	AgeKeySuffix = ".agekey"
	// PGPKeySuffix ends a data key holding armored OpenPGP private keys.
	PGPKeySuffix = ".asc"
)

// Decryptor decrypts SOPS documents with the keys of one decryption
// Secret, and with nothing else. It is safe for concurrent use and holds
// no state besides the parsed keys.
type Decryptor struct {
	server *keyServer
}

// New parses the data of a decryption Secret (spec.decryption.secretRef):
// age and PGP keys, and the credentials of the key services (cloud.go).
// Errors wrap ErrInvalidKey and name the data key, never its content. A
// Secret holding no usable key gives a Decryptor that decrypts nothing
// but what the identity in opts (at most one) reaches.
func New(keys map[string][]byte, opts ...Options) (*Decryptor, error) {
	names := make([]string, 0, len(keys))
	for name := range keys {
		names = append(names, name)
	}
	sort.Strings(names) // deterministic errors and key order
	srv := &keyServer{}
	for _, o := range opts {
		srv.cloud.awsFor, srv.cloud.objectLevel, srv.cloud.azureTransport = o.AWS, o.ObjectLevel, o.AzureTransport
		srv.cloud.gcpObject, srv.cloud.azureObject, srv.cloud.vaultLogin, srv.cloud.vaultRefused = o.GCP, o.Azure, o.Vault, o.VaultRefused
	}
	for _, name := range names {
		switch {
		case filepath.Ext(name) == AgeKeySuffix:
			ids, err := parseAgeIdentities(keys[name])
			if err != nil {
				return nil, fmt.Errorf("%w: data key %q: %w", ErrInvalidKey, name, err)
			}
			srv.age = append(srv.age, ids...)
		case filepath.Ext(name) == PGPKeySuffix:
			ring, err := parsePGPKeys(keys[name])
			if err != nil {
				return nil, fmt.Errorf("%w: data key %q: %w", ErrInvalidKey, name, err)
			}
			srv.pgp = append(srv.pgp, ring...)
		default:
			if _, err := srv.cloud.importCloudKey(name, keys[name]); err != nil {
				return nil, describeImportError(name, err)
			}
		}
	}
	return &Decryptor{server: srv}, nil
}

// parseAgeIdentities reads age identities one per line. age's own parser
// quotes a line it cannot read, which here would be key material, so lines
// are parsed one by one and a failure names the line number only.
func parseAgeIdentities(data []byte) ([]age.Identity, error) {
	var ids []age.Identity
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var (
			id  age.Identity
			err error
		)
		switch {
		case strings.HasPrefix(line, "AGE-SECRET-KEY-PQ-1"):
			id, err = age.ParseHybridIdentity(line)
		case strings.HasPrefix(line, "AGE-SECRET-KEY-1"):
			id, err = age.ParseX25519Identity(line)
		default:
			err = errors.New("not an age identity")
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: malformed age identity", i+1)
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, errors.New("no age identity found")
	}
	return ids, nil
}

// parsePGPKeys reads armored OpenPGP keys and keeps those with private
// material. Passphrase-protected keys are refused: nothing could unlock them.
func parsePGPKeys(data []byte) (openpgp.EntityList, error) {
	var ring openpgp.EntityList
	rest := data
	// A value may hold several armored blocks back to back;
	// ReadArmoredKeyRing reads only the first.
	for {
		start := bytes.Index(rest, []byte("-----BEGIN PGP"))
		if start < 0 {
			break
		}
		rest = rest[start:]
		end := bytes.Index(rest, []byte("-----END PGP"))
		if end < 0 {
			return nil, errors.New("unterminated armored PGP block")
		}
		if nl := bytes.IndexByte(rest[end:], '\n'); nl >= 0 {
			end += nl + 1
		} else {
			end = len(rest)
		}
		block := rest[:end]
		rest = rest[end:]
		entities, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(block))
		if err != nil {
			return nil, fmt.Errorf("reading armored PGP key: %w", err)
		}
		ring = append(ring, entities...)
	}
	if len(ring) == 0 {
		return nil, errors.New("no armored PGP key found")
	}
	var private openpgp.EntityList
	for _, e := range ring {
		if e.PrivateKey == nil {
			continue
		}
		if e.PrivateKey.Encrypted {
			return nil, fmt.Errorf("PGP key %X is passphrase-protected, which is not supported", e.PrimaryKey.Fingerprint)
		}
		for _, sub := range e.Subkeys {
			if sub.PrivateKey != nil && sub.PrivateKey.Encrypted {
				return nil, fmt.Errorf("PGP key %X has a passphrase-protected subkey, which is not supported", e.PrimaryKey.Fingerprint)
			}
		}
		private = append(private, e)
	}
	if len(private) == 0 {
		return nil, errors.New("no PGP private key found (public keys cannot decrypt)")
	}
	return private, nil
}

// clients returns the key service clients for one decryption. The recorder
// collects what each key request answered, to explain a failure.
func (d *Decryptor) clients() ([]keyservice.KeyServiceClient, *recorder) {
	rec := &recorder{server: d.server}
	return []keyservice.KeyServiceClient{keyservice.NewCustomLocalClient(rec)}, rec
}
