package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	corev1 "k8s.io/api/core/v1"

	"github.com/weir-gitops/weir/internal/auth"
)

// ProviderName is the spec.provider value.
const ProviderName = "azure"

// The ServiceAccount annotations Flux reads (Azure workload identity's).
const (
	TenantIDAnnotation = "azure.workload.identity/tenant-id"
	ClientIDAnnotation = "azure.workload.identity/client-id"
)

// TokenExchangeAudience is the audience of the ServiceAccount token Entra
// accepts as a federated client assertion.
const TokenExchangeAudience = "api://AzureADTokenExchange"

// ScopeDevOps is Azure DevOps' scope, for Git over HTTPS.
const ScopeDevOps = "499b84ac-1321-427f-aa17-267ca6975798/.default"

// Provider gets Entra ID access tokens. The zero value talks to Azure.
type Provider struct {
	// HTTPClient carries azidentity's requests and ACR's token exchange
	// (through the Settings' proxy when they have one); nil is azcore's
	// default transport.
	HTTPClient *http.Client
	// ResourceManagerURL is Azure Resource Manager's base URL (remote AKS
	// clusters); empty is DefaultResourceManagerURL.
	ResourceManagerURL string
}

// Default is the provider consumers share (internal/auth/registry and
// its callers). Tests that run a controller in-process give it a fake's
// HTTP client.
var Default = &Provider{}

// AccessToken returns the access token of id for scope, from s's cache
// when it has one.
func (p *Provider) AccessToken(ctx context.Context, id auth.Identity, s *auth.Settings, scope string) (auth.Token, error) {
	if !id.ObjectLevel() {
		return cacheOf(s).Get(ctx, ProviderName+"|controller|scope="+scope, func(ctx context.Context) (auth.Token, error) {
			return p.controllerToken(ctx, s, scope)
		})
	}
	tenant, client, err := p.identity(ctx, id, s)
	if err != nil {
		return auth.Token{}, err
	}
	return cacheOf(s).Get(ctx, objectKey(id, tenant, client)+"|scope="+scope, func(ctx context.Context) (auth.Token, error) {
		return p.serviceAccountToken(ctx, id, s, tenant, client, scope)
	})
}

func objectKey(id auth.Identity, tenant, client string) string {
	return strings.Join([]string{ProviderName, id.String(), TenantIDAnnotation + "=" + tenant, ClientIDAnnotation + "=" + client}, "|")
}

func cacheOf(s *auth.Settings) *auth.Cache {
	if s == nil {
		return nil
	}
	return s.Cache
}

// identity reads the tenant and client of id's ServiceAccount.
func (p *Provider) identity(ctx context.Context, id auth.Identity, s *auth.Settings) (tenant, client string, err error) {
	sa, err := s.ServiceAccount(ctx, id)
	if err != nil {
		return "", "", err
	}
	if tenant, client, err = annotations(sa); err != nil {
		return "", "", fmt.Errorf("failed to get provider identity from service account '%s/%s' annotations: %w", sa.Namespace, sa.Name, err)
	}
	return tenant, client, nil
}

// annotations reads the two annotations, with Flux's messages.
func annotations(sa *corev1.ServiceAccount) (tenant, client string, err error) {
	tenant, ok := sa.Annotations[TenantIDAnnotation]
	if !ok {
		return "", "", fmt.Errorf("azure tenant ID is not set in the service account annotation %s", TenantIDAnnotation)
	}
	client, ok = sa.Annotations[ClientIDAnnotation]
	if !ok {
		return "", "", fmt.Errorf("azure client ID is not set in the service account annotation %s", ClientIDAnnotation)
	}
	return tenant, client, nil
}

// clientOptions carry azidentity's requests on p.HTTPClient, through s's
// proxy when it has one.
func (p *Provider) clientOptions(s *auth.Settings) azcore.ClientOptions {
	var o azcore.ClientOptions
	if hc := s.HTTPClient(p.HTTPClient); hc != nil {
		o.Transport = hc
	}
	return o
}

// serviceAccountToken presents a token of id's ServiceAccount to Entra as
// the client assertion of client in tenant.
func (p *Provider) serviceAccountToken(ctx context.Context, id auth.Identity, s *auth.Settings, tenant, client, scope string) (auth.Token, error) {
	subject, err := s.ServiceAccountToken(ctx, id, TokenExchangeAudience)
	if err != nil {
		return auth.Token{}, err
	}
	assertion := func(context.Context) (string, error) { return subject.Value, nil }
	cred, err := azidentity.NewClientAssertionCredential(tenant, client, assertion,
		&azidentity.ClientAssertionCredentialOptions{ClientOptions: p.clientOptions(s)})
	if err == nil {
		var t auth.Token
		if t, err = getToken(ctx, cred, scope); err == nil {
			return t, nil
		}
	}
	return auth.Token{}, fmt.Errorf("failed to create access token for %s (Entra ID token endpoint, client assertion for client '%s' in tenant '%s'): %w",
		id, client, tenant, err)
}

func getToken(ctx context.Context, cred azcore.TokenCredential, scope string) (auth.Token, error) {
	t, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{scope}})
	if err != nil {
		return auth.Token{}, err
	}
	return auth.Token{Value: t.Token, ExpiresAt: t.ExpiresOn}, nil
}

// controllerToken uses the controller's own credential.
func (p *Provider) controllerToken(ctx context.Context, s *auth.Settings, scope string) (auth.Token, error) {
	cred, err := p.controllerCredential(p.clientOptions(s))
	if err == nil {
		var t auth.Token
		if t, err = getToken(ctx, cred, scope); err == nil {
			return t, nil
		}
	}
	return auth.Token{}, fmt.Errorf("failed to create default access token: Azure credential of the controller: %w", err)
}

// controllerCredential is the first of the environment credential,
// workload identity and managed identity the environment configures, as
// Flux picks it.
func (p *Provider) controllerCredential(co azcore.ClientOptions) (azcore.TokenCredential, error) {
	var errs []error
	env, err := azidentity.NewEnvironmentCredential(&azidentity.EnvironmentCredentialOptions{ClientOptions: co})
	if err == nil {
		return env, nil
	}
	errs = append(errs, fmt.Errorf("EnvironmentCredential: %w", err))
	clientID, haveClientID := os.LookupEnv("AZURE_CLIENT_ID")
	if workloadIdentityConfigured() {
		wi, err := azidentity.NewWorkloadIdentityCredential(&azidentity.WorkloadIdentityCredentialOptions{ClientOptions: co})
		if err == nil {
			return wi, nil
		}
		errs = append(errs, fmt.Errorf("workload identity: %w", err))
	} else {
		errs = append(errs, errors.New("workload identity: missing environment variables for workload identity. Check webhook and pod configuration"))
	}
	o := &azidentity.ManagedIdentityCredentialOptions{ClientOptions: co}
	if haveClientID {
		o.ID = azidentity.ClientID(clientID)
	}
	mi, err := azidentity.NewManagedIdentityCredential(o)
	if err == nil {
		return mi, nil
	}
	return nil, errors.Join(append(errs, fmt.Errorf("ManagedIdentity: %w", err))...)
}

func workloadIdentityConfigured() bool {
	for _, v := range []string{"AZURE_CLIENT_ID", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_AUTHORITY_HOST", "AZURE_TENANT_ID"} {
		if _, ok := os.LookupEnv(v); !ok {
			return false
		}
	}
	return true
}
