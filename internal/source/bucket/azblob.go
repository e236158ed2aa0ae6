package bucket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// Keys of an azure Bucket's spec.secretRef, as Flux names them.
const (
	AzureTenantID                   = "tenantId"
	AzureClientID                   = "clientId"
	AzureClientSecret               = "clientSecret"
	AzureClientCertificate          = "clientCertificate"
	AzureClientCertificatePassword  = "clientCertificatePassword"
	AzureClientCertificateSendChain = "clientCertificateSendChain"
	AzureAuthorityHost              = "authorityHost"
	AzureAccountKey                 = "accountKey"
	AzureSASKey                     = "sasKey"
)

// AzureScope is the scope of Entra tokens for Blob Storage.
const AzureScope = "https://storage.azure.com/.default"

// AzureConfig says how to reach an Azure storage account's Blob service.
type AzureConfig struct {
	// Endpoint is the account's URL (https://<account>.blob.core.windows.net,
	// or http(s)://<ip>:<port>/<account> for an emulator).
	Endpoint string
	// Insecure lets credentials go over plain HTTP (spec.insecure).
	Insecure bool
	// SecretName and Secret are spec.secretRef's; nil Secret, or one
	// naming no credential of its own, uses Identity.
	SecretName string
	Secret     map[string][]byte
	// Identity is the cloud identity's credential (internal/auth/azure).
	Identity azcore.TokenCredential
	// IdentityClient carries the Secret's Entra requests (client secret,
	// certificate, managed identity); nil is azcore's default.
	IdentityClient *http.Client
	// Proxy, when set, carries the Blob requests.
	Proxy *url.URL
}

// AzureValidateSecret is Flux's check that a Secret holds at least one of
// the credential forms.
func AzureValidateSecret(secretName string, data map[string][]byte) error {
	has := func(k string) bool { _, ok := data[k]; return ok }
	if has(AzureTenantID) && has(AzureClientID) && (has(AzureClientSecret) || has(AzureClientCertificate)) ||
		has(AzureClientID) || has(AzureAccountKey) || has(AzureSASKey) || has(AzureAuthorityHost) {
		return nil
	}
	return fmt.Errorf("invalid '%s' secret data: requires a '%s' or '%s' field, a combination of '%s', '%s' and '%s', or '%s', '%s' and '%s'",
		secretName, AzureClientID, AzureAccountKey, AzureTenantID, AzureClientID, AzureClientSecret, AzureTenantID, AzureClientID, AzureClientCertificate)
}

// NewAzure returns a client for the account's Blob service; it makes no
// request. The Secret's forms are tried in Flux's order: a client secret,
// a client certificate, a managed identity's client id, the account key,
// a SAS token; with none of them, the cloud identity.
func NewAzure(cfg AzureConfig) (*Client, error) {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.Proxy != nil {
		transport.Proxy = http.ProxyURL(cfg.Proxy)
	}
	opts := &azblob.ClientOptions{ClientOptions: policy.ClientOptions{
		Transport: &http.Client{Transport: transport}, InsecureAllowCredentialWithHTTP: cfg.Insecure,
		Retry: policy.RetryOptions{MaxRetries: maxRetries},
	}}
	token, err := azureSecretToken(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create token credential from '%s' Secret: %w", cfg.SecretName, err)
	}
	var c *azblob.Client
	switch {
	case token != nil:
		c, err = azblob.NewClient(cfg.Endpoint, token, opts)
	case len(cfg.Secret[AzureAccountKey]) > 0:
		c, err = azureSharedKey(cfg, opts)
	case len(cfg.Secret[AzureSASKey]) > 0:
		var u string
		if u, err = withSAS(cfg.Endpoint, string(cfg.Secret[AzureSASKey])); err == nil {
			c, err = azblob.NewClientWithNoCredential(u, opts)
		}
	case cfg.Identity != nil:
		c, err = azblob.NewClient(cfg.Endpoint, cfg.Identity, opts)
	default:
		c, err = azblob.NewClientWithNoCredential(cfg.Endpoint, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: endpoint '%s': %w", ErrInvalidConfig, cfg.Endpoint, err)
	}
	return NewClient(&azureStore{c: c}), nil
}

// azureSecretToken is the Secret's Entra credential, or nil when it names
// none.
func azureSecretToken(cfg AzureConfig) (azcore.TokenCredential, error) {
	d := cfg.Secret
	if d == nil {
		return nil, nil
	}
	co := policy.ClientOptions{}
	if cfg.IdentityClient != nil {
		co.Transport = cfg.IdentityClient
	}
	if h := d[AzureAuthorityHost]; len(h) > 0 {
		co.Cloud = cloud.Configuration{ActiveDirectoryAuthorityHost: string(h)}
	}
	tenant, client := string(d[AzureTenantID]), string(d[AzureClientID])
	if tenant != "" && client != "" {
		if secret := d[AzureClientSecret]; len(secret) > 0 {
			return azidentity.NewClientSecretCredential(tenant, client, string(secret),
				&azidentity.ClientSecretCredentialOptions{ClientOptions: co})
		}
		if pem := d[AzureClientCertificate]; len(pem) > 0 {
			certs, key, err := azidentity.ParseCertificates(pem, d[AzureClientCertificatePassword])
			if err != nil {
				return nil, errors.New("failed to parse client certificates") // the parser's error may quote the key
			}
			send := strings.ToLower(string(d[AzureClientCertificateSendChain]))
			return azidentity.NewClientCertificateCredential(tenant, client, certs, key,
				&azidentity.ClientCertificateCredentialOptions{ClientOptions: co, SendCertificateChain: send == "1" || send == "true"})
		}
	}
	if client != "" {
		return azidentity.NewManagedIdentityCredential(&azidentity.ManagedIdentityCredentialOptions{
			ClientOptions: co, ID: azidentity.ClientID(client),
		})
	}
	return nil, nil
}

func azureSharedKey(cfg AzureConfig, opts *azblob.ClientOptions) (*azblob.Client, error) {
	account, err := AzureAccountName(cfg.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("failed to create shared credential from '%s' Secret data: %w", cfg.SecretName, err)
	}
	cred, err := azblob.NewSharedKeyCredential(account, string(cfg.Secret[AzureAccountKey]))
	if err != nil {
		return nil, fmt.Errorf("failed to create shared credential from '%s' Secret data: invalid '%s'", cfg.SecretName, AzureAccountKey)
	}
	return azblob.NewClientWithSharedKeyCredential(cfg.Endpoint, cred, opts)
}

// AzureAccountName is the storage account an endpoint names: the first
// label of its host, or for an IP address (the emulator's addressing) the
// first segment of its path.
func AzureAccountName(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("failed to extract account name from endpoint: %w", err)
	}
	host := u.Hostname()
	if net.ParseIP(host) != nil {
		if account, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/"); account != "" {
			return account, nil
		}
		return "", fmt.Errorf("failed to extract account name from endpoint: expected the account as the path of '%s'", endpoint)
	}
	parts := strings.Split(host, ".")
	if len(parts) <= 2 {
		return "", fmt.Errorf("failed to extract account name from endpoint: expected '%s' to be a subdomain", host)
	}
	return parts[0], nil
}

// withSAS merges a SAS token into the endpoint's query; the token's own
// parameters win. Errors never quote the token.
func withSAS(endpoint, sas string) (string, error) {
	values, err := url.ParseQuery(strings.TrimPrefix(sas, "?"))
	if err != nil {
		return "", fmt.Errorf("unable to parse SAS token from '%s'", AzureSASKey)
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("unable to parse endpoint URL: %w", err)
	}
	for k, vs := range u.Query() {
		if !values.Has(k) {
			values[k] = vs
		}
	}
	u.RawQuery = values.Encode()
	return u.String(), nil
}

// azureStore is a Store on azblob.
type azureStore struct {
	c *azblob.Client
}

// AzureETag is the ETag as Flux indexes Azure blobs: the hex of the
// service's (quoted) ETag string.
func AzureETag[T ~string](e *T) string {
	if e == nil {
		return ""
	}
	return fmt.Sprintf("%x", string(*e))
}

func (s *azureStore) container(name string) *container.Client {
	return s.c.ServiceClient().NewContainerClient(name)
}

func (s *azureStore) BucketExists(ctx context.Context, bucket string) (bool, error) {
	_, err := s.container(bucket).GetProperties(ctx, nil)
	if bloberror.HasCode(err, bloberror.ContainerNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (s *azureStore) ListObjects(ctx context.Context, bucket, prefix string, visit func(Object) error) error {
	opts := &container.ListBlobsFlatOptions{}
	if prefix != "" {
		opts.Prefix = &prefix
	}
	pager := s.container(bucket).NewListBlobsFlatPager(opts)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, b := range page.Segment.BlobItems {
			if b.Name == nil || b.Properties == nil {
				continue
			}
			o := Object{Key: *b.Name, ETag: AzureETag(b.Properties.ETag)}
			if b.Properties.ContentLength != nil {
				o.Size = *b.Properties.ContentLength
			}
			if err := visit(o); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *azureStore) StatObject(ctx context.Context, bucket, key string) (Object, error) {
	p, err := s.container(bucket).NewBlobClient(key).GetProperties(ctx, nil)
	if err != nil {
		return Object{}, azureNotFound(err)
	}
	o := Object{Key: key, ETag: AzureETag(p.ETag)}
	if p.ContentLength != nil {
		o.Size = *p.ContentLength
	}
	return o, nil
}

func (s *azureStore) GetObject(ctx context.Context, bucket, key string) (io.ReadCloser, Object, error) {
	r, err := s.container(bucket).NewBlobClient(key).DownloadStream(ctx, nil)
	if err != nil {
		return nil, Object{}, azureNotFound(err)
	}
	o := Object{Key: key, ETag: AzureETag(r.ETag)}
	if r.ContentLength != nil {
		o.Size = *r.ContentLength
	}
	return r.Body, o, nil
}

func azureNotFound(err error) error {
	if bloberror.HasCode(err, bloberror.BlobNotFound) {
		return fmt.Errorf("%w: %w", ErrObjectNotFound, err)
	}
	return err
}
