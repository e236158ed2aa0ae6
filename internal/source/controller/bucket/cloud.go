package bucket

import (
	"context"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"golang.org/x/oauth2"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth"
	azureauth "github.com/weir-gitops/weir/internal/auth/azure"
	gcpauth "github.com/weir-gitops/weir/internal/auth/gcp"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source/bucket"
)

// gcsClient builds the gcp provider's client: the Secret's JSON key, else
// the cloud identity's access token (internal/auth/gcp, cached; exchanged
// through spec.proxySecretRef's proxy).
func (r *Reconciler) gcsClient(ctx context.Context, obj *sourcev1.Bucket) (*bucket.Client, error) {
	cfg := bucket.GCSConfig{Endpoint: obj.Spec.Endpoint, Insecure: obj.Spec.Insecure}
	var err error
	if cfg.Proxy, err = r.proxy(ctx, obj); err != nil {
		return nil, err
	}
	_, data, err := r.providerSecret(ctx, obj, bucket.GCSValidateSecret)
	if err != nil {
		return nil, err
	}
	if data != nil {
		cfg.ServiceAccountKey = data[bucket.SecretGCPServiceAccount]
	} else {
		id, err := r.identity(obj)
		if err != nil {
			return nil, err
		}
		t, err := gcpauth.Default.AccessToken(ctx, id, r.Auth.WithProxy(cfg.Proxy))
		if err != nil {
			return nil, authErr(fmt.Errorf("failed to get credentials from 'gcp': %w", err))
		}
		cfg.Token = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: t.Value, TokenType: "Bearer", Expiry: t.ExpiresAt})
	}
	c, err := bucket.NewGCS(ctx, cfg)
	if err != nil {
		return nil, clientErr(err)
	}
	return c, nil
}

// providerSecret reads spec.secretRef, when set, and checks it with the
// provider's validate (Flux's messages); nil data when there is none.
func (r *Reconciler) providerSecret(ctx context.Context, obj *sourcev1.Bucket,
	validate func(name string, data map[string][]byte) error) (string, map[string][]byte, error) {
	ref := obj.Spec.SecretRef
	if ref == nil {
		return "", nil, nil
	}
	s, err := r.secret(ctx, obj.Namespace, ref.Name)
	if err != nil {
		return "", nil, authErr(err)
	}
	if err := validate(s.Name, s.Data); err != nil {
		return "", nil, authErr(err)
	}
	return s.Name, s.Data, nil
}

// clientErr is a client that cannot be built: a bad endpoint stalls, a
// bad key is an authentication failure.
func clientErr(err error) error {
	if r := bucketError(err); errs.Reason(r, "") == sourcev1.URLInvalidReason {
		return r
	}
	return authErr(err)
}

// azureClient builds the azure provider's client: the Secret's forms
// (Flux's order), else the cloud identity's Entra token for Blob Storage
// (internal/auth/azure, cached; exchanged through spec.proxySecretRef's
// proxy).
func (r *Reconciler) azureClient(ctx context.Context, obj *sourcev1.Bucket) (*bucket.Client, error) {
	cfg := bucket.AzureConfig{Endpoint: obj.Spec.Endpoint, Insecure: obj.Spec.Insecure, IdentityClient: azureauth.Default.HTTPClient}
	var err error
	if cfg.Proxy, err = r.proxy(ctx, obj); err != nil {
		return nil, err
	}
	if cfg.SecretName, cfg.Secret, err = r.providerSecret(ctx, obj, bucket.AzureValidateSecret); err != nil {
		return nil, err
	}
	if !azureSecretCredential(cfg.Secret) {
		id, err := r.identity(obj)
		if err != nil {
			return nil, err
		}
		t, err := azureauth.Default.AccessToken(ctx, id, r.Auth.WithProxy(cfg.Proxy), bucket.AzureScope)
		if err != nil {
			return nil, authErr(fmt.Errorf("failed to get credentials from 'azure': %w", err))
		}
		cfg.Identity = staticCredential(t)
	}
	c, err := bucket.NewAzure(cfg)
	if err != nil {
		return nil, clientErr(err)
	}
	return c, nil
}

// azureSecretCredential reports whether the Secret names a credential of
// its own (anything but authorityHost alone).
func azureSecretCredential(data map[string][]byte) bool {
	for _, k := range []string{bucket.AzureClientID, bucket.AzureAccountKey, bucket.AzureSASKey} {
		if len(data[k]) > 0 {
			return true
		}
	}
	return false
}

// staticCredential hands an access token already obtained to azblob.
type staticCredential auth.Token

func (t staticCredential) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: t.Value, ExpiresOn: t.ExpiresAt}, nil
}
