package decrypt

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/security/keyvault/azkeys"
	"github.com/getsops/sops/v3/azkv"
	"github.com/getsops/sops/v3/gcpkms"
	"github.com/getsops/sops/v3/hcvault"
	"github.com/getsops/sops/v3/keyservice"
	"github.com/getsops/sops/v3/kms"
	vaultapi "github.com/hashicorp/vault/api"
)

// cloudKey is a SOPS master key of a key service, built from a key stanza
// with the decryption's credentials applied. The calls to the service are
// SOPS's own (its kms, gcpkms, azkv and hcvault packages).
type cloudKey interface {
	EncryptContext(ctx context.Context, dataKey []byte) error
	DecryptContext(ctx context.Context) ([]byte, error)
	SetEncryptedDataKey(enc []byte)
	EncryptedDataKey() []byte
}

// service names each key service in messages.
var service = map[string]string{
	"awskms":  "AWS KMS",
	"gcpkms":  "GCP KMS",
	"azurekv": "Azure Key Vault",
	"hcvault": "HashiCorp Vault transit",
}

// kmsARNRegion is where an AWS KMS key ARN holds its region (SOPS's own
// pattern): the region the key's calls go to and the identity's STS
// exchange is made in.
var kmsARNRegion = regexp.MustCompile(`^arn:aws[\w-]*:kms:(.+):[0-9]+:(key|alias)/.+$`)

// cloudMasterKey builds the SOPS master key of a cloud key stanza. ok is
// false for a key type that is not a cloud key service.
func (s *keyServer) cloudMasterKey(ctx context.Context, k *keyservice.Key) (cloudKey, bool, error) {
	c := &s.cloud
	kind, _ := describeKey(k)
	switch t := k.GetKeyType().(type) {
	case *keyservice.Key_KmsKey:
		mk := &kms.MasterKey{Arn: t.KmsKey.GetArn(), Role: t.KmsKey.GetRole(), AwsProfile: t.KmsKey.GetAwsProfile(),
			EncryptionContext: encryptionContext(t.KmsKey.GetContext())}
		switch {
		case c.aws != nil:
			kms.NewCredentialsProvider(c.aws).ApplyToMasterKey(mk)
		case c.awsFor != nil:
			m := kmsARNRegion.FindStringSubmatch(mk.Arn)
			if m == nil {
				return nil, true, fmt.Errorf("no valid ARN found in '%s'", mk.Arn)
			}
			kms.NewCredentialsProvider(c.awsFor(m[1])).ApplyToMasterKey(mk)
		}
		return mk, true, nil
	case *keyservice.Key_GcpKmsKey:
		mk := &gcpkms.MasterKey{ResourceID: t.GcpKmsKey.GetResourceId()}
		switch {
		case c.gcp != nil:
			gcpkms.CredentialJSON(c.gcp).ApplyToMasterKey(mk)
		case c.gcpObject != nil:
			gcpkms.NewTokenSource(c.gcpObject).ApplyToMasterKey(mk)
		}
		return c.unlessRefused(mk, c.gcp != nil || c.gcpObject != nil, kind)
	case *keyservice.Key_AzureKeyvaultKey:
		mk := &azkv.MasterKey{VaultURL: t.AzureKeyvaultKey.GetVaultUrl(), Name: t.AzureKeyvaultKey.GetName(),
			Version: t.AzureKeyvaultKey.GetVersion()}
		switch {
		case c.azure != nil:
			azkv.NewTokenCredential(c.azure).ApplyToMasterKey(mk)
		case c.azureObject != nil:
			azkv.NewTokenCredential(c.azureObject).ApplyToMasterKey(mk)
		}
		if c.azureTransport != nil {
			azkv.NewClientOptions(&azkeys.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: c.azureTransport},
				DisableChallengeResourceVerification: true}).ApplyToMasterKey(mk)
		}
		return c.unlessRefused(mk, c.azure != nil || c.azureObject != nil, kind)
	case *keyservice.Key_VaultKey:
		mk := &hcvault.MasterKey{VaultAddress: t.VaultKey.GetVaultAddress(), EnginePath: t.VaultKey.GetEnginePath(),
			KeyName: t.VaultKey.GetKeyName()}
		token, fromLogin, err := c.vaultToken(ctx, mk.VaultAddress)
		if err != nil {
			return nil, true, err
		}
		if token != "" {
			hcvault.Token(token).ApplyToMasterKey(mk)
		}
		if token == "" && c.objectLevel != "" {
			return nil, true, fmt.Errorf("object-level workload identity (%s) for %s needs the controller's --sops-vault-configmap to list the Vault address %s, or a %s in the decryption Secret",
				c.objectLevel, service[kind], mk.VaultAddress, VaultTokenKey)
		}
		if fromLogin {
			return &loginKey{MasterKey: mk, token: token}, true, nil
		}
		return mk, true, nil
	}
	return nil, false, nil
}

// loginKey is a Vault transit key whose token came from a login
// (Options.Vault), which may be asked for a new one when transit refuses
// it.
type loginKey struct {
	*hcvault.MasterKey
	token string
}

// refusedLogin is the key's login token when call's error is Vault
// refusing it (HTTP 403), empty otherwise.
func refusedLogin(mk cloudKey, err error) string {
	lk, ok := mk.(*loginKey)
	var refused *vaultapi.ResponseError
	if !ok || !errors.As(err, &refused) || refused.StatusCode != http.StatusForbidden {
		return ""
	}
	return lk.token
}

// unlessRefused returns mk, or refuses it when neither the Secret nor the
// Kustomization's ServiceAccount gives credentials for it (credentialed
// false) and the Kustomization names a ServiceAccount: the controller's
// own identity must not stand in for it.
func (c *cloudCreds) unlessRefused(mk cloudKey, credentialed bool, kind string) (cloudKey, bool, error) {
	if credentialed || c.objectLevel == "" {
		return mk, true, nil
	}
	return nil, true, fmt.Errorf("%w: object-level workload identity (%s) for %s; put the service's credentials in the decryption Secret",
		ErrNotSupported, c.objectLevel, service[kind])
}

func encryptionContext(in map[string]string) map[string]*string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]*string, len(in))
	for k, v := range in {
		out[k] = &v
	}
	return out
}

// cloudCall builds the master key of a cloud key stanza and runs call
// with it; ok is false when the stanza is no cloud key. Errors name the
// key and the service, with the Secret's credential values scrubbed.
func (s *keyServer) cloudCall(ctx context.Context, k *keyservice.Key, call func(cloudKey) error) (ok bool, err error) {
	mk, ok, err := s.cloudMasterKey(ctx, k)
	if !ok {
		return false, nil
	}
	kind, id := describeKey(k)
	if err != nil {
		return true, &keyRequestError{kind: kind, id: id, reason: s.cloud.redact(err.Error()), cause: err}
	}
	err = call(mk)
	if refused := refusedLogin(mk, err); refused != "" && s.cloud.vaultRefused != nil {
		// A cached login token Vault no longer honours (revoked, or its
		// lease cut short): forget it and log in once more.
		s.cloud.vaultRefused(ctx, k.GetVaultKey().GetVaultAddress(), refused)
		if mk, _, err = s.cloudMasterKey(ctx, k); err != nil {
			return true, &keyRequestError{kind: kind, id: id, reason: s.cloud.redact(err.Error()), cause: err}
		}
		if err = call(mk); refusedLogin(mk, err) != "" {
			return true, &keyRequestError{kind: kind, id: id, reason: service[kind] + ": permission denied (HTTP 403) twice, " +
				"for the login's token and for a new login's: the Vault role of the login has no policy allowing this key"}
		}
	}
	if err != nil {
		return true, &keyRequestError{kind: kind, id: id, reason: service[kind] + ": " + s.cloud.redact(err.Error())}
	}
	return true, nil
}

// decryptCloud recovers a data key through a key service.
func (s *keyServer) decryptCloud(ctx context.Context, k *keyservice.Key, ciphertext []byte) ([]byte, bool, error) {
	var plain []byte
	ok, err := s.cloudCall(ctx, k, func(mk cloudKey) error {
		mk.SetEncryptedDataKey(ciphertext)
		var err error
		plain, err = mk.DecryptContext(ctx)
		return err
	})
	if !ok || err != nil {
		return nil, ok, err
	}
	if len(plain) > maxDataKeySize {
		kind, id := describeKey(k)
		return nil, true, &keyRequestError{kind: kind, id: id, reason: "encrypted data key is malformed"}
	}
	return plain, true, nil
}

// encryptCloud wraps a data key through a key service (tests, examples).
func (s *keyServer) encryptCloud(ctx context.Context, k *keyservice.Key, dataKey []byte) ([]byte, bool, error) {
	var out []byte
	ok, err := s.cloudCall(ctx, k, func(mk cloudKey) error {
		if err := mk.EncryptContext(ctx, dataKey); err != nil {
			return err
		}
		out = mk.EncryptedDataKey()
		return nil
	})
	return out, ok, err
}
