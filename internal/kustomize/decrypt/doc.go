// Package decrypt owns SOPS decryption for Kustomizations (Flux's
// spec.decryption with provider sops): turning the keys of the decryption
// Secret into a Decryptor, and decrypting the documents, files and objects a
// build meets with it. It talks to no cluster: the caller reads the Secret
// named by spec.decryption.secretRef and hands New its data.
//
// # Keys
//
// New reads the Secret's data the way kustomize-controller does, by key
// name: a key ending in .agekey holds age identities (one per line; blank
// lines and lines starting with # are skipped), a key ending in .asc holds
// one or more ASCII-armored OpenPGP private keys, and four names hold the
// credentials of key services (cloud.go): sops.aws-kms (AWS KMS),
// sops.gcp-kms (GCP KMS), sops.azure-kv (Azure Key Vault) and
// sops.vault-token (HashiCorp Vault or OpenBao transit). Every other key
// is ignored, as in Flux. Passphrase-protected PGP keys are refused (Flux
// cannot use them either: its gpg runs without a pinentry).
//
// # Key services
//
// The calls to AWS KMS, GCP KMS, Azure Key Vault and Vault transit are
// SOPS's own (its kms, gcpkms, azkv and hcvault packages); what this
// package decides is the credentials they carry (kms.go): the Secret's
// when it has the service's key; else the identity the caller exchanged:
// for AWS, GCP and Azure the Kustomization's ServiceAccount (Options.AWS
// through STS AssumeRoleWithWebIdentity, Options.GCP through Google STS
// and IAM Credentials, Options.Azure through Entra's federated client
// assertion), for Vault that ServiceAccount or the controller's own
// through a Vault login with its token (Options.Vault,
// internal/auth/vault, --sops-vault-configmap); else the SDK's default chain, which is the
// controller's own identity (environment credentials, IRSA or EKS Pod
// Identity, the GCE metadata server, Azure workload or managed identity,
// VAULT_TOKEN). When the Kustomization names a ServiceAccount
// (Options.ObjectLevel), a key whose service gets nothing from the Secret
// or the identity fails instead of falling back to the controller's
// identity. For Vault the order is Flux 2.9's: sops.vault-token, the
// login, VAULT_TOKEN; an address --sops-vault-configmap does not list
// (ErrVaultAddressNotListed) gets no login, and only the controller's
// identity may then use VAULT_TOKEN.
// Encryption context and role assumption (arn+role in the metadata) are
// SOPS's: the context is sent with every call and the role assumed with
// the credentials above. The Vault address is the file's vault_address.
// Errors name the service and the key; credential values read from the
// Secret are scrubbed from them.
//
// # Only these keys
//
// SOPS's own key sources look for keys wherever a workstation keeps them:
// SOPS_AGE_KEY, SOPS_AGE_KEY_FILE, SOPS_AGE_KEY_CMD (which runs a command),
// ~/.config/sops/age/keys.txt, ~/.ssh/id_ed25519, GNUPGHOME and the gpg
// binary. A controller must use the Kustomization's keys and nothing else,
// or one tenant's Kustomization could decrypt with the controller's own
// keys. So SOPS is never asked to decrypt a data key itself: every document
// is decrypted through a local client to keyServer, this package's
// implementation of SOPS's keyservice.KeyServiceServer, which holds the
// parsed keys and credentials in memory and answers each request with
// them. PGP is done
// in process with github.com/ProtonMail/go-crypto (the library SOPS itself
// uses); no gpg binary, no GnuPG home, nothing written to disk. SOPS's pgp
// package cannot do this: its in-process path reads a legacy secring.gpg
// file and otherwise runs gpg.
//
// Two process-wide effects come with SOPS. Importing it runs its audit
// package's init, which reads /etc/sops/audit.yaml if the file exists (and
// would connect to the databases it names); controller images do not ship
// one, and nothing here can prevent it. And SOPS logs to stderr through its
// own loggers, which this package silences at init (log.go).
//
// # What is decrypted
//
// As in kustomize-controller (fluxcd/kustomize-controller/internal/decryptor),
// three places:
//
//   - DecryptObject, an object with a top-level sops stanza holding a mac: the
//     whole object is decrypted as JSON and returned without the stanza. Any
//     kind qualifies, as in Flux.
//   - DecryptObject, a Secret whose data (base64) or stringData values are
//     SOPS documents, recognized by the marker Flux uses for each format
//     (sops_mac=ENC[ for dotenv, [sops] for INI, mac: ENC[ for YAML, "mac":
//     "ENC[ for JSON and binary); each is decrypted and emitted in the format
//     its key's extension names (FormatForPath). Flux only looks at data;
//     stringData is weir's addition.
//   - DecryptFile, files kustomize's secretGenerator reads (files and envs)
//     and patch files, before kustomize reads them. internal/kustomize calls
//     it through its Decryptor interface, which *Decryptor satisfies.
//
// # Integrity
//
// Every SOPS value is AES-GCM encrypted with its key path as additional
// data, so an altered or moved ciphertext never decrypts. The document MAC
// (over all values, in order) is verified for files and Secret values, which
// reach the decryptor byte for byte as SOPS wrote them, and a mismatch fails
// with ErrMACMismatch. It is not verified for whole objects: kustomize has
// re-rendered them (sorted keys, added namespace, labels, prefixes), which
// changes the MAC input, so the check would fail on every real build; Flux
// skips it for the same reason (its checkSopsMac is off). The cost is that
// unencrypted fields of a whole-object document are not authenticated, and
// those are the fields kustomize legitimately rewrites.
//
// # Errors
//
// Errors never carry plaintext or key material. SOPS's own messages can
// quote a value (a dotenv line, a value that failed to decrypt), so they are
// replaced by this package's own wording; what remains is the cause (no
// matching key, with the recipients and fingerprints the document names;
// MAC mismatch; not a SOPS document) for the caller to prefix with the file
// or object. All decryption errors wrap ErrDecryptionFailed; errors from New
// wrap ErrInvalidKey and name the Secret data key at fault.
//
// Flux reports decryption failures as part of the build: Ready=False with
// reason BuildFailed ("decryption failed for '<name>': ..."). weir does the
// same; ErrDecryptionFailed lets the controller tell them apart in logs and
// events, and is not terminal (the Secret may be fixed without a new source
// revision).
//
// # Encryption
//
// EncryptYAML encrypts a manifest to age recipients the way
// `sops --encrypt --encrypted-regex '^(data|stringData)$'` does. It exists
// for tests and for producing example repositories; the controller never
// encrypts.
package decrypt
