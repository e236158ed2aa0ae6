package render

import (
	"context"
	"errors"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/aws/aws-sdk-go-v2/aws"
	"golang.org/x/oauth2"

	"github.com/weir-gitops/weir/internal/auth"
	authaws "github.com/weir-gitops/weir/internal/auth/aws"
	authazure "github.com/weir-gitops/weir/internal/auth/azure"
	authgcp "github.com/weir-gitops/weir/internal/auth/gcp"
	"github.com/weir-gitops/weir/internal/kustomize/decrypt"
)

// objectIdentity is what a decryption presents to key services as an
// object-level identity (spec.decryption.serviceAccountName, or the
// lockdown default), each exchanged the way internal/auth exchanges it
// for every consumer and kept in the settings' cache. Nothing is
// exchanged until a key service first needs credentials, so a
// Kustomization with age keys only never asks a cloud.
func objectIdentity(settings *auth.Settings, id auth.Identity) decrypt.Options {
	o := decrypt.Options{
		AWS:         awsWebIdentity(settings, id),
		GCP:         gcpTokenSource{settings: settings, id: id},
		Azure:       azureCredential{settings: settings, id: id},
		ObjectLevel: id.String(),
	}
	if c := authazure.Default.HTTPClient; c != nil {
		// Tests reach Entra's and Key Vault's fakes this way; in a
		// controller it is nil.
		o.AzureTransport = c
	}
	return o
}

// awsWebIdentity returns the AWS credentials of an object-level identity
// for KMS keys in a region: a TokenRequest for the ServiceAccount
// (audience sts.amazonaws.com) exchanged through STS
// AssumeRoleWithWebIdentity for the role its eks.amazonaws.com/role-arn
// annotation names, with Flux's session name.
func awsWebIdentity(settings *auth.Settings, id auth.Identity) func(region string) aws.CredentialsProvider {
	return func(region string) aws.CredentialsProvider {
		return aws.CredentialsProviderFunc(func(ctx context.Context) (aws.Credentials, error) {
			return authaws.Credentials(ctx, settings, id, region)
		})
	}
}

// gcpTokenSource gives GCP KMS calls the access token of an object-level
// identity: a TokenRequest for the ServiceAccount (the GKE workload
// identity pool, or the provider its
// gcp.auth.fluxcd.io/workload-identity-provider annotation names)
// exchanged at Google STS, then for the Google service account its
// iam.gke.io/gcp-service-account annotation names when it has one.
type gcpTokenSource struct {
	settings *auth.Settings
	id       auth.Identity
}

// Token implements oauth2.TokenSource. The Google SDK asks for a token
// without a context, so the exchange runs under its own: the API
// server's and Google's timeouts bound it.
func (s gcpTokenSource) Token() (*oauth2.Token, error) {
	t, err := authgcp.Default.AccessToken(context.Background(), s.id, s.settings)
	if err != nil {
		return nil, err
	}
	return &oauth2.Token{AccessToken: t.Value, TokenType: "Bearer", Expiry: t.ExpiresAt}, nil
}

// azureCredential gives Azure Key Vault calls the Entra token of an
// object-level identity for the scope the SDK asks for
// (https://vault.azure.net/.default): the ServiceAccount's token as the
// client assertion of the application its
// azure.workload.identity/client-id annotation names, in the tenant of
// azure.workload.identity/tenant-id.
type azureCredential struct {
	settings *auth.Settings
	id       auth.Identity
}

// GetToken implements azcore.TokenCredential.
func (c azureCredential) GetToken(ctx context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	if len(opts.Scopes) != 1 {
		return azcore.AccessToken{}, errors.New("azure Key Vault asked for a token of other than one scope")
	}
	t, err := authazure.Default.AccessToken(ctx, c.id, c.settings, opts.Scopes[0])
	if err != nil {
		return azcore.AccessToken{}, err
	}
	return azcore.AccessToken{Token: t.Value, ExpiresOn: t.ExpiresAt}, nil
}

var (
	_ oauth2.TokenSource     = gcpTokenSource{}
	_ azcore.TokenCredential = azureCredential{}
)
