package decrypt

import (
	"errors"
	"fmt"
	"time"

	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/keys"
	"github.com/getsops/sops/v3/keyservice"
	"github.com/getsops/sops/v3/pgp"
)

// SecretEncryptedRegex is the encrypted_regex Flux's guides use for
// Secrets: only data and stringData are encrypted, so kustomize can still
// read apiVersion, kind and metadata.
const SecretEncryptedRegex = "^(data|stringData)$"

// sopsVersion is written into the metadata of documents EncryptYAML
// produces: the SOPS release weir is built with (go.mod).
const sopsVersion = "3.13.3"

// EncryptYAML encrypts a YAML manifest, usually a Secret, to the given age
// recipients ("age1..."), the way
//
//	sops --encrypt --age <recipients> --encrypted-regex '^(data|stringData)$'
//
// does: only the values under data and stringData are encrypted, and the
// result carries a sops stanza any SOPS release since 3.7 decrypts.
//
// It is meant for tests and for producing example repositories; the
// controller never encrypts. It reads no key from the environment either.
func EncryptYAML(plaintext []byte, ageRecipients []string) ([]byte, error) {
	if len(ageRecipients) == 0 {
		return nil, errors.New("at least one age recipient is required")
	}
	group := make(sops.KeyGroup, 0, len(ageRecipients))
	for _, r := range ageRecipients {
		if _, err := parseAgeRecipient(r); err != nil {
			return nil, err
		}
		mk, err := sopsage.MasterKeyFromRecipient(r)
		if err != nil {
			return nil, fmt.Errorf("age recipient %q: %w", r, err)
		}
		group = append(group, mk)
	}
	return encrypt(&keyServer{}, plaintext, FormatYAML, group, SecretEncryptedRegex)
}

// EncryptYAMLTo encrypts a YAML manifest as EncryptYAML does, to SOPS
// master keys of any type (kms.NewMasterKeyFromArn,
// gcpkms.NewMasterKeyFromResourceID, azkv.NewMasterKey,
// hcvault.NewMasterKeyFromURI, age recipients), reaching the key services
// with the Decryptor's credentials: what `sops --encrypt` does with the
// same credentials in its environment. For tests and examples.
func (d *Decryptor) EncryptYAMLTo(plaintext []byte, group []keys.MasterKey) ([]byte, error) {
	if len(group) == 0 {
		return nil, errors.New("at least one master key is required")
	}
	return encrypt(d.server, plaintext, FormatYAML, group, SecretEncryptedRegex)
}

// encryptPGP is EncryptYAML for PGP keys the Decryptor holds; the tests use
// it, as PGP encryption needs only the public half a private key carries.
func (d *Decryptor) encryptPGP(plaintext []byte, format string, fingerprints []string, encryptedRegex string) ([]byte, error) {
	group := make(sops.KeyGroup, 0, len(fingerprints))
	for _, fp := range fingerprints {
		group = append(group, pgp.NewMasterKeyFromFingerprint(fp))
	}
	return encrypt(d.server, plaintext, format, group, encryptedRegex)
}

// encrypt encrypts a plain document of the given format to one key group.
func encrypt(srv *keyServer, plaintext []byte, format string, group []keys.MasterKey, encryptedRegex string) ([]byte, error) {
	store, err := storeFor(format)
	if err != nil {
		return nil, err
	}
	branches, err := store.LoadPlainFile(plaintext)
	if err != nil {
		return nil, fmt.Errorf("parsing the %s document: %w", format, err)
	}
	if len(branches) > 0 && store.HasSopsTopLevelKey(branches[0]) {
		return nil, errors.New("the document is already SOPS-encrypted")
	}
	meta := sops.Metadata{
		KeyGroups: []sops.KeyGroup{group},
		Version:   sopsVersion,
	}
	if encryptedRegex != "" {
		meta.EncryptedRegex = encryptedRegex
	} else {
		meta.UnencryptedSuffix = sops.DefaultUnencryptedSuffix
	}
	tree := sops.Tree{Branches: branches, Metadata: meta}
	svcs := []keyservice.KeyServiceClient{keyservice.NewCustomLocalClient(srv)}
	dataKey, errs := tree.GenerateDataKeyWithKeyServices(svcs)
	if len(errs) > 0 {
		return nil, fmt.Errorf("encrypting the data key: %w", errors.Join(errs...))
	}
	cipher := aes.NewCipher()
	mac, err := tree.Encrypt(dataKey, cipher)
	if err != nil {
		return nil, errors.New("encrypting the document values failed")
	}
	tree.Metadata.LastModified = time.Now().UTC()
	encMAC, err := cipher.Encrypt(mac, dataKey, tree.Metadata.LastModified.Format(time.RFC3339))
	if err != nil {
		return nil, errors.New("encrypting the MAC failed")
	}
	tree.Metadata.MessageAuthenticationCode = encMAC
	return store.EmitEncryptedFile(tree)
}
