package decrypt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf16"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"golang.org/x/oauth2"
	"sigs.k8s.io/yaml"
)

// Names of the decryption Secret's data keys holding key-service
// credentials, as in kustomize-controller.
const (
	// AWSKMSKey holds AWS credentials as YAML: aws_access_key_id,
	// aws_secret_access_key and optionally aws_session_token.
	AWSKMSKey = "sops.aws-kms"
	// GCPKMSKey holds Google credentials JSON (a service account key, or
	// any credentials file the Google SDK reads).
	GCPKMSKey = "sops.gcp-kms"
	// AzureKVKey holds an Azure credential as YAML or JSON: tenantId,
	// clientId and clientSecret; or tenantId, clientId and
	// clientCertificate (PEM, optionally clientCertificatePassword and
	// clientCertificateSendChain); or the appId, tenant and password that
	// `az ad sp create-for-rbac` prints; or a clientId alone, a managed
	// identity. authorityHost picks a sovereign cloud.
	AzureKVKey = "sops.azure-kv"
	// VaultTokenKey holds a HashiCorp Vault or OpenBao token.
	VaultTokenKey = "sops.vault-token"
)

// Options are what the caller knows about the identity a decryption
// presents to key services besides the decryption Secret.
type Options struct {
	// AWS, when set, gives the credentials AWS KMS calls use for a key in
	// region when the Secret holds no sops.aws-kms: the object-level
	// identity (spec.decryption.serviceAccountName) exchanged through STS.
	// Nil uses the AWS SDK's default chain, the controller's own identity.
	AWS func(region string) aws.CredentialsProvider
	// GCP, when set, gives the access tokens GCP KMS calls carry when the
	// Secret holds no sops.gcp-kms: the object-level identity exchanged
	// through Google STS (and IAM Credentials when the ServiceAccount
	// names a Google service account). Nil uses application default
	// credentials, the controller's own identity.
	GCP oauth2.TokenSource
	// Azure, when set, is the credential Azure Key Vault calls present
	// when the Secret holds no sops.azure-kv: the object-level identity's
	// ServiceAccount token as Entra's client assertion. Nil uses the
	// controller's own identity (the SDK's default credential chain).
	Azure azcore.TokenCredential
	// Vault, when set, gives the token Vault transit calls carry for a
	// key at address (its vault_address) when the Secret holds no
	// sops.vault-token: the Kubernetes workload identity's login to the
	// instance --sops-vault-configmap lists for address. For an address
	// not listed it returns an error wrapping ErrVaultAddressNotListed;
	// the controller's own VAULT_TOKEN then stands in for the
	// controller's identity (Flux's precedence: sops.vault-token, the
	// login, VAULT_TOKEN), never for an object-level one.
	Vault func(ctx context.Context, address string) (string, error)
	// VaultRefused, when set, is told that Vault transit refused (HTTP
	// 403) a token Vault gave for address: the login forgets it, and the
	// key's call is made once more with the token Vault then gives (a new
	// login). A token that is refused again fails the call.
	VaultRefused func(ctx context.Context, address, token string)
	// ObjectLevel names the object-level identity ("serviceaccount/ns/name")
	// when the Kustomization uses one. A key whose service gets neither
	// credentials from the Secret nor the identity above (GCP or Azure
	// when the caller set no GCP or Azure, failing with ErrNotSupported;
	// Vault without a login) then fails instead of falling back to the
	// controller's identity, which would let a tenant decrypt with it.
	ObjectLevel string
	// AzureTransport carries Entra and Key Vault calls; nil is azcore's
	// default. Only tests set it, to reach a TLS fake (azcore sends
	// bearer tokens over HTTPS only, so no environment variable can
	// point the SDK at 127.0.0.1); with it, Key Vault's challenge is not
	// checked against the vault's host.
	AzureTransport policy.Transporter
}

// ErrVaultAddressNotListed marks a Vault address --sops-vault-configmap
// does not list: no ServiceAccount token is presented to it.
var ErrVaultAddressNotListed = errors.New("not listed in --sops-vault-configmap")

// ErrNotSupported marks a key the Kustomization's identity cannot reach
// in weir yet.
var ErrNotSupported = errors.New("not supported by weir yet")

// cloudCreds are the key-service credentials of one decryption. A nil or
// empty field means: none in the Secret.
type cloudCreds struct {
	aws    aws.CredentialsProvider
	awsFor func(region string) aws.CredentialsProvider
	gcp    []byte
	azure  azcore.TokenCredential
	vault  string
	// vaultLogin and vaultRefused are Options.Vault and
	// Options.VaultRefused.
	vaultLogin   func(ctx context.Context, address string) (string, error)
	vaultRefused func(ctx context.Context, address, token string)
	// gcpObject and azureObject are Options.GCP and Options.Azure.
	gcpObject   oauth2.TokenSource
	azureObject azcore.TokenCredential
	// azureTransport is Options.AzureTransport.
	azureTransport policy.Transporter
	// objectLevel is Options.ObjectLevel.
	objectLevel string
	// secrets are the credential values read from the Secret, never to
	// be repeated in an error.
	secrets []string
}

// importCloudKey reads one of the credential keys; ok is false when name
// is not one.
func (c *cloudCreds) importCloudKey(name string, value []byte) (bool, error) {
	switch name {
	case AWSKMSKey:
		return true, c.importAWS(value)
	case GCPKMSKey:
		v := bytes.TrimSpace(value)
		if len(v) == 0 {
			return true, errors.New("empty Google credentials")
		}
		c.gcp = v
		c.secrets = append(c.secrets, jsonSecrets(v)...)
		return true, nil
	case AzureKVKey:
		return true, c.importAzure(value)
	case VaultTokenKey:
		c.vault = strings.TrimSpace(string(value))
		c.secrets = append(c.secrets, c.vault)
		return true, nil
	}
	return false, nil
}

func (c *cloudCreds) importAWS(value []byte) error {
	var in struct {
		AccessKeyID     string `json:"aws_access_key_id"`
		SecretAccessKey string `json:"aws_secret_access_key"`
		SessionToken    string `json:"aws_session_token"`
	}
	if err := yaml.Unmarshal(value, &in); err != nil {
		return errors.New("not YAML with aws_access_key_id and aws_secret_access_key")
	}
	if in.AccessKeyID == "" || in.SecretAccessKey == "" {
		return errors.New("aws_access_key_id and aws_secret_access_key are required")
	}
	c.secrets = append(c.secrets, in.SecretAccessKey, in.SessionToken)
	c.aws = credentials.NewStaticCredentialsProvider(in.AccessKeyID, in.SecretAccessKey, in.SessionToken)
	return nil
}

// azureConfig is the sops.azure-kv document, with the field names Flux
// reads.
type azureConfig struct {
	TenantID                   string `json:"tenantId,omitempty"`
	ClientID                   string `json:"clientId,omitempty"`
	ClientSecret               string `json:"clientSecret,omitempty"`
	ClientCertificate          string `json:"clientCertificate,omitempty"`
	ClientCertificatePassword  string `json:"clientCertificatePassword,omitempty"`
	ClientCertificateSendChain bool   `json:"clientCertificateSendChain,omitempty"`
	AuthorityHost              string `json:"authorityHost,omitempty"`
	AppID                      string `json:"appId,omitempty"`
	Tenant                     string `json:"tenant,omitempty"`
	Password                   string `json:"password,omitempty"`
}

func (c *cloudCreds) importAzure(value []byte) error {
	var conf azureConfig
	if err := yaml.Unmarshal(decodeUTF16(value), &conf); err != nil {
		return errors.New("not a YAML or JSON Azure credential")
	}
	c.secrets = append(c.secrets, conf.ClientSecret, conf.ClientCertificatePassword, conf.Password)
	cred, err := azureCredential(conf, c.azureTransport)
	if err != nil {
		return err
	}
	c.azure = cred
	return nil
}

// azureCredential picks the credential Flux picks for each shape of the
// document, in Flux's order.
func azureCredential(c azureConfig, transport policy.Transporter) (azcore.TokenCredential, error) {
	// Without authorityHost the SDK's own default holds (the public
	// cloud, or AZURE_AUTHORITY_HOST).
	opts := azcore.ClientOptions{Transport: transport}
	if c.AuthorityHost != "" {
		opts.Cloud = cloud.Configuration{ActiveDirectoryAuthorityHost: c.AuthorityHost}
	}
	switch {
	case c.TenantID != "" && c.ClientID != "" && c.ClientSecret != "":
		return azidentity.NewClientSecretCredential(c.TenantID, c.ClientID, c.ClientSecret,
			&azidentity.ClientSecretCredentialOptions{ClientOptions: opts, DisableInstanceDiscovery: transport != nil})
	case c.TenantID != "" && c.ClientID != "" && c.ClientCertificate != "":
		certs, key, err := azidentity.ParseCertificates([]byte(c.ClientCertificate), []byte(c.ClientCertificatePassword))
		if err != nil {
			return nil, errors.New("clientCertificate cannot be parsed (PEM or PKCS#12, with its password)")
		}
		return azidentity.NewClientCertificateCredential(c.TenantID, c.ClientID, certs, key,
			&azidentity.ClientCertificateCredentialOptions{ClientOptions: opts, SendCertificateChain: c.ClientCertificateSendChain})
	case c.Tenant != "" && c.AppID != "" && c.Password != "":
		return azidentity.NewClientSecretCredential(c.Tenant, c.AppID, c.Password,
			&azidentity.ClientSecretCredentialOptions{ClientOptions: opts})
	case c.ClientID != "":
		return azidentity.NewManagedIdentityCredential(&azidentity.ManagedIdentityCredentialOptions{
			ID: azidentity.ClientID(c.ClientID)})
	}
	return nil, errors.New("invalid data: requires a 'clientId' field, a combination of 'tenantId', 'clientId' and 'clientSecret', or 'tenantId', 'clientId' and 'clientCertificate'")
}

// decodeUTF16 turns a UTF-16 document with a byte order mark (what
// PowerShell writes) into UTF-8, as Flux accepts both.
func decodeUTF16(b []byte) []byte {
	if len(b) < 2 || len(b)%2 != 0 {
		return b
	}
	var big bool
	switch {
	case b[0] == 0xFE && b[1] == 0xFF:
		big = true
	case b[0] == 0xFF && b[1] == 0xFE:
	default:
		return b
	}
	units := make([]uint16, 0, len(b)/2-1)
	for i := 2; i < len(b); i += 2 {
		if big {
			units = append(units, uint16(b[i])<<8|uint16(b[i+1]))
		} else {
			units = append(units, uint16(b[i+1])<<8|uint16(b[i]))
		}
	}
	return []byte(string(utf16.Decode(units)))
}

// jsonSecrets are the values of a Google credentials file that are
// secrets: the private key and any client secret or refresh token.
func jsonSecrets(b []byte) []string {
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil
	}
	var out []string
	for _, k := range []string{"private_key", "client_secret", "refresh_token"} {
		if s, ok := m[k].(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// redact replaces every credential value in msg.
func (c *cloudCreds) redact(msg string) string {
	for _, s := range c.secrets {
		if len(s) >= 4 {
			msg = strings.ReplaceAll(msg, s, "<redacted>")
		}
	}
	return msg
}

// describeImportError is the error of a credential key that cannot be
// read; it names the key, never the value.
func describeImportError(name string, err error) error {
	return fmt.Errorf("%w: data key %q: %w", ErrInvalidKey, name, err)
}

// vaultToken is the token of a Vault key at address, in Flux's order: the
// Secret's sops.vault-token, else the Kubernetes workload identity's
// login (Options.Vault, fromLogin), else none, which leaves SOPS its own
// lookup (VAULT_TOKEN) for the controller's identity. An address the
// login does not list falls through to VAULT_TOKEN only for the
// controller's identity and only when the controller has one; otherwise
// it fails naming the address.
func (c *cloudCreds) vaultToken(ctx context.Context, address string) (token string, fromLogin bool, err error) {
	if c.vault != "" {
		return c.vault, false, nil
	}
	if c.vaultLogin == nil {
		return "", false, nil
	}
	tok, err := c.vaultLogin(ctx, address)
	if err != nil && errors.Is(err, ErrVaultAddressNotListed) && c.objectLevel == "" && os.Getenv("VAULT_TOKEN") != "" {
		return "", false, nil
	}
	return tok, err == nil && tok != "", err
}
