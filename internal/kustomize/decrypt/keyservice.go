package decrypt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"filippo.io/age"
	agearmor "filippo.io/age/armor"
	"github.com/ProtonMail/go-crypto/openpgp"
	pgparmor "github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/getsops/sops/v3/keyservice"
)

// maxDataKeySize bounds what a key stanza may decrypt to. SOPS data keys
// are 32 bytes (a Shamir part is one more); anything larger is not one.
const maxDataKeySize = 1024

// keyServer answers SOPS's data-key requests with in-memory keys only. It
// is the only key service SOPS is given, so no key is ever looked up in the
// environment, the home directory, a GnuPG home or a cloud KMS.
type keyServer struct {
	age   []age.Identity
	pgp   openpgp.EntityList
	cloud cloudCreds
}

var _ keyservice.KeyServiceServer = (*keyServer)(nil)

// keyRequestError is one key stanza that could not be used. It names the
// key by its public identity only.
type keyRequestError struct {
	kind        string // age, pgp, awskms, ...
	id          string // recipient, fingerprint, ARN...; public
	noMatch     bool   // no held key fits this stanza
	reason      string
	unsupported bool
	// cause is a sentinel the reason stands for (ErrNotSupported).
	cause error
}

func (e *keyRequestError) Unwrap() error { return e.cause }

func (e *keyRequestError) Error() string {
	switch {
	case e.unsupported:
		return fmt.Sprintf("%s key %s: not supported by weir", e.kind, e.id)
	case e.noMatch:
		return fmt.Sprintf("%s key %s: no matching key in the decryption Secret", e.kind, e.id)
	default:
		return fmt.Sprintf("%s key %s: %s", e.kind, e.id, e.reason)
	}
}

func (s *keyServer) Decrypt(ctx context.Context, req *keyservice.DecryptRequest) (*keyservice.DecryptResponse, error) {
	if req.GetKey() == nil {
		return nil, errors.New("key service request without a key")
	}
	switch k := req.GetKey().GetKeyType().(type) {
	case *keyservice.Key_AgeKey:
		plain, err := s.decryptAge(k.AgeKey.GetRecipient(), req.GetCiphertext())
		if err != nil {
			return nil, err
		}
		return &keyservice.DecryptResponse{Plaintext: plain}, nil
	case *keyservice.Key_PgpKey:
		plain, err := s.decryptPGP(k.PgpKey.GetFingerprint(), req.GetCiphertext())
		if err != nil {
			return nil, err
		}
		return &keyservice.DecryptResponse{Plaintext: plain}, nil
	default:
		plain, ok, err := s.decryptCloud(ctx, req.GetKey(), req.GetCiphertext())
		if ok {
			if err != nil {
				return nil, err
			}
			return &keyservice.DecryptResponse{Plaintext: plain}, nil
		}
		kind, id := describeKey(req.GetKey())
		return nil, &keyRequestError{kind: kind, id: id, unsupported: true}
	}
}

func (s *keyServer) decryptAge(recipient string, ciphertext []byte) ([]byte, error) {
	if len(s.age) == 0 {
		return nil, &keyRequestError{kind: "age", id: recipient, noMatch: true}
	}
	var src io.Reader = bytes.NewReader(ciphertext)
	if bytes.HasPrefix(bytes.TrimSpace(ciphertext), []byte(agearmor.Header)) {
		src = agearmor.NewReader(bytes.NewReader(bytes.TrimSpace(ciphertext)))
	}
	r, err := age.Decrypt(src, s.age...)
	if err != nil {
		var noMatch *age.NoIdentityMatchError
		if errors.As(err, &noMatch) {
			return nil, &keyRequestError{kind: "age", id: recipient, noMatch: true}
		}
		return nil, &keyRequestError{kind: "age", id: recipient, reason: "encrypted data key is malformed"}
	}
	plain, err := io.ReadAll(io.LimitReader(r, maxDataKeySize+1))
	if err != nil || len(plain) > maxDataKeySize {
		return nil, &keyRequestError{kind: "age", id: recipient, reason: "encrypted data key is malformed"}
	}
	return plain, nil
}

func (s *keyServer) decryptPGP(fingerprint string, ciphertext []byte) ([]byte, error) {
	if len(s.pgp) == 0 {
		return nil, &keyRequestError{kind: "pgp", id: fingerprint, noMatch: true}
	}
	block, err := pgparmor.Decode(bytes.NewReader(ciphertext))
	if err != nil {
		return nil, &keyRequestError{kind: "pgp", id: fingerprint, reason: "encrypted data key is not an armored PGP message"}
	}
	md, err := openpgp.ReadMessage(block.Body, s.pgp, nil, nil)
	if err != nil {
		if errors.Is(err, pgperrors.ErrKeyIncorrect) {
			return nil, &keyRequestError{kind: "pgp", id: fingerprint, noMatch: true}
		}
		return nil, &keyRequestError{kind: "pgp", id: fingerprint, reason: "encrypted data key is malformed"}
	}
	plain, err := io.ReadAll(io.LimitReader(md.UnverifiedBody, maxDataKeySize+1))
	if err != nil || len(plain) > maxDataKeySize {
		return nil, &keyRequestError{kind: "pgp", id: fingerprint, reason: "encrypted data key is malformed"}
	}
	return plain, nil
}

// Encrypt wraps a data key for an age recipient, or for a PGP key whose
// private half the Decryptor holds. EncryptYAML and the tests use it.
func (s *keyServer) Encrypt(ctx context.Context, req *keyservice.EncryptRequest) (*keyservice.EncryptResponse, error) {
	if req.GetKey() == nil {
		return nil, errors.New("key service request without a key")
	}
	switch k := req.GetKey().GetKeyType().(type) {
	case *keyservice.Key_AgeKey:
		out, err := encryptAge(k.AgeKey.GetRecipient(), req.GetPlaintext())
		if err != nil {
			return nil, err
		}
		return &keyservice.EncryptResponse{Ciphertext: out}, nil
	case *keyservice.Key_PgpKey:
		out, err := s.encryptPGP(k.PgpKey.GetFingerprint(), req.GetPlaintext())
		if err != nil {
			return nil, err
		}
		return &keyservice.EncryptResponse{Ciphertext: out}, nil
	default:
		out, ok, err := s.encryptCloud(ctx, req.GetKey(), req.GetPlaintext())
		if ok {
			if err != nil {
				return nil, err
			}
			return &keyservice.EncryptResponse{Ciphertext: out}, nil
		}
		kind, id := describeKey(req.GetKey())
		return nil, &keyRequestError{kind: kind, id: id, unsupported: true}
	}
}

func encryptAge(recipient string, dataKey []byte) ([]byte, error) {
	r, err := parseAgeRecipient(recipient)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	aw := agearmor.NewWriter(&buf)
	w, err := age.Encrypt(aw, r)
	if err != nil {
		return nil, fmt.Errorf("age encryption to %s: %w", recipient, err)
	}
	if _, err := w.Write(dataKey); err != nil {
		return nil, fmt.Errorf("age encryption to %s: %w", recipient, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("age encryption to %s: %w", recipient, err)
	}
	if err := aw.Close(); err != nil {
		return nil, fmt.Errorf("age encryption to %s: %w", recipient, err)
	}
	return buf.Bytes(), nil
}

func parseAgeRecipient(s string) (age.Recipient, error) {
	s = strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(s, "age1pq1"):
		return age.ParseHybridRecipient(s)
	case strings.HasPrefix(s, "age1"):
		return age.ParseX25519Recipient(s)
	}
	return nil, fmt.Errorf("%q is not an age recipient", s)
}

func (s *keyServer) encryptPGP(fingerprint string, dataKey []byte) ([]byte, error) {
	want := strings.ToUpper(strings.ReplaceAll(fingerprint, " ", ""))
	var to *openpgp.Entity
	for _, e := range s.pgp {
		if fp := fmt.Sprintf("%X", e.PrimaryKey.Fingerprint); want != "" && strings.HasSuffix(fp, want) {
			to = e
			break
		}
	}
	if to == nil {
		return nil, &keyRequestError{kind: "pgp", id: fingerprint, noMatch: true}
	}
	var buf bytes.Buffer
	aw, err := pgparmor.Encode(&buf, "PGP MESSAGE", nil)
	if err != nil {
		return nil, err
	}
	w, err := openpgp.Encrypt(aw, []*openpgp.Entity{to}, nil, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("pgp encryption to %s: %w", fingerprint, err)
	}
	if _, err := w.Write(dataKey); err != nil {
		return nil, fmt.Errorf("pgp encryption to %s: %w", fingerprint, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("pgp encryption to %s: %w", fingerprint, err)
	}
	if err := aw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// describeKey names a key stanza by type and public identity.
func describeKey(k *keyservice.Key) (kind, id string) {
	switch t := k.GetKeyType().(type) {
	case *keyservice.Key_AgeKey:
		return "age", t.AgeKey.GetRecipient()
	case *keyservice.Key_PgpKey:
		return "pgp", t.PgpKey.GetFingerprint()
	case *keyservice.Key_KmsKey:
		return "awskms", t.KmsKey.GetArn()
	case *keyservice.Key_GcpKmsKey:
		return "gcpkms", t.GcpKmsKey.GetResourceId()
	case *keyservice.Key_AzureKeyvaultKey:
		return "azurekv", t.AzureKeyvaultKey.GetVaultUrl() + "/keys/" + t.AzureKeyvaultKey.GetName()
	case *keyservice.Key_VaultKey:
		return "hcvault", t.VaultKey.GetVaultAddress() + "/" + t.VaultKey.GetEnginePath() + "/" + t.VaultKey.GetKeyName()
	case *keyservice.Key_HckmsKey:
		return "hckms", t.HckmsKey.GetKeyId()
	}
	return "unknown", "?"
}

// recorder passes requests to the server and keeps the key errors of one
// decryption, which SOPS's own error type does not expose.
type recorder struct {
	server *keyServer
	mu     sync.Mutex
	errs   []*keyRequestError
}

func (r *recorder) Decrypt(ctx context.Context, req *keyservice.DecryptRequest) (*keyservice.DecryptResponse, error) {
	resp, err := r.server.Decrypt(ctx, req)
	if err != nil {
		var kerr *keyRequestError
		if errors.As(err, &kerr) {
			r.mu.Lock()
			r.errs = append(r.errs, kerr)
			r.mu.Unlock()
		}
	}
	return resp, err
}

func (r *recorder) Encrypt(ctx context.Context, req *keyservice.EncryptRequest) (*keyservice.EncryptResponse, error) {
	return r.server.Encrypt(ctx, req)
}

// dataKeyError explains why no data key could be recovered, naming the
// document's keys by their public identities.
func (r *recorder) dataKeyError() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) == 0 {
		return failed("cannot recover the SOPS data key")
	}
	allNoMatch := true
	var cause error
	msgs := make([]string, 0, len(r.errs))
	for _, e := range r.errs {
		if !e.noMatch && !e.unsupported {
			allNoMatch = false
		}
		if e.cause != nil && cause == nil {
			cause = e.cause
		}
		msgs = append(msgs, e.Error())
	}
	msg := "cannot recover the SOPS data key: " + strings.Join(msgs, "; ")
	switch {
	case allNoMatch:
		return failedWith(ErrNoMatchingKey, msg)
	case cause != nil:
		return failedWith(cause, msg)
	}
	return failed(msg)
}
