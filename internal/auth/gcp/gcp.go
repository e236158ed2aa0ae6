package gcp

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"golang.org/x/oauth2/google/externalaccount"
	corev1 "k8s.io/api/core/v1"

	"github.com/weir-gitops/weir/internal/auth"
)

// ProviderName is the spec.provider value.
const ProviderName = "gcp"

// The ServiceAccount annotations Flux reads.
const (
	// ServiceAccountAnnotation names the Google service account to impersonate.
	ServiceAccountAnnotation = "iam.gke.io/gcp-service-account"
	// WorkloadIdentityProviderAnnotation names the workload identity
	// provider of a cluster that is not GKE.
	WorkloadIdentityProviderAnnotation = "gcp.auth.fluxcd.io/workload-identity-provider"
)

// Google's endpoints, which Provider's fields override.
const (
	DefaultSTSURL            = "https://sts.googleapis.com/v1/token"
	DefaultIAMCredentialsURL = "https://iamcredentials.googleapis.com"
)

// Scopes are the OAuth scopes of every token, as Flux asks for them.
var Scopes = []string{
	"https://www.googleapis.com/auth/cloud-platform",
	"https://www.googleapis.com/auth/userinfo.email",
}

// Provider gets GCP access tokens. The zero value talks to Google.
type Provider struct {
	// STSURL is Google STS's token endpoint; empty is DefaultSTSURL.
	STSURL string
	// IAMCredentialsURL is the base of IAM Credentials; empty is
	// DefaultIAMCredentialsURL.
	IAMCredentialsURL string
	// HTTPClient carries STS and IAM Credentials requests (through the
	// Settings' proxy when they have one); nil is http.DefaultClient.
	HTTPClient *http.Client
	// ContainerURL is the base of the GKE API (clusters.get of remote
	// clusters); empty is DefaultContainerURL.
	ContainerURL string

	mu      sync.Mutex
	cluster *gkeCluster
}

// Default is the provider consumers share (internal/auth/registry and
// its callers): one process, one Google. Tests that run a controller
// in-process point its endpoints at a fake.
var Default = &Provider{}

// AccessToken returns the access token of id, from s's cache when it has
// one.
func (p *Provider) AccessToken(ctx context.Context, id auth.Identity, s *auth.Settings) (auth.Token, error) {
	scopes := "scopes=" + strings.Join(Scopes, ",")
	if !id.ObjectLevel() {
		return cacheOf(s).Get(ctx, ProviderName+"|controller|"+scopes, controllerToken)
	}
	sa, err := s.ServiceAccount(ctx, id)
	if err != nil {
		return auth.Token{}, err
	}
	email, wip, err := annotations(sa)
	if err != nil {
		return auth.Token{}, fmt.Errorf("failed to get provider identity from service account '%s/%s' annotations: %w", sa.Namespace, sa.Name, err)
	}
	key := strings.Join([]string{ProviderName, id.String(), ServiceAccountAnnotation + "=" + email,
		WorkloadIdentityProviderAnnotation + "=" + wip, scopes, "sts=" + p.stsURL(), "iam=" + p.iamURL()}, "|")
	return cacheOf(s).Get(ctx, key, func(ctx context.Context) (auth.Token, error) {
		return p.serviceAccountToken(ctx, id, s, email, wip)
	})
}

func cacheOf(s *auth.Settings) *auth.Cache {
	if s == nil {
		return nil
	}
	return s.Cache
}

// controllerToken asks application default credentials: on GKE, the
// metadata server.
func controllerToken(ctx context.Context) (auth.Token, error) {
	src, err := google.DefaultTokenSource(ctx, Scopes...)
	if err == nil {
		var t *oauth2.Token
		if t, err = src.Token(); err == nil {
			return auth.Token{Value: t.AccessToken, ExpiresAt: t.Expiry}, nil
		}
	}
	return auth.Token{}, fmt.Errorf("failed to create default access token: GCP application default credentials (the GKE metadata server): %w", err)
}

// serviceAccountToken exchanges a token of id's ServiceAccount at Google
// STS, then impersonates email when there is one.
func (p *Provider) serviceAccountToken(ctx context.Context, id auth.Identity, s *auth.Settings, email, wip string) (auth.Token, error) {
	tokenAudience, stsAudience := "//iam.googleapis.com/"+wip, "//iam.googleapis.com/"+wip
	if wip == "" {
		c, err := p.gkeCluster(ctx)
		if err != nil {
			return auth.Token{}, fmt.Errorf("failed to get provider audience: %w", err)
		}
		tokenAudience, stsAudience = c.workloadIdentityPool(), c.identityNamespace()
	}
	subject, err := s.ServiceAccountToken(ctx, id, tokenAudience)
	if err != nil {
		return auth.Token{}, err
	}
	conf := externalaccount.Config{
		UniverseDomain:       "googleapis.com",
		Audience:             stsAudience,
		SubjectTokenType:     "urn:ietf:params:oauth:token-type:jwt",
		TokenURL:             p.stsURL(),
		SubjectTokenSupplier: subjectToken(subject.Value),
		Scopes:               Scopes,
	}
	calls := "Google STS"
	if email != "" {
		conf.ServiceAccountImpersonationURL = p.iamURL() + "/v1/projects/-/serviceAccounts/" + email + ":generateAccessToken"
		calls = "Google STS, then IAM Credentials generateAccessToken for " + email
	}
	if hc := s.HTTPClient(p.HTTPClient); hc != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, hc)
	}
	src, err := externalaccount.NewTokenSource(ctx, conf)
	if err == nil {
		var t *oauth2.Token
		if t, err = src.Token(); err == nil {
			return auth.Token{Value: t.AccessToken, ExpiresAt: t.Expiry}, nil
		}
	}
	return auth.Token{}, fmt.Errorf("failed to create access token for %s (%s): %w", id, calls, err)
}

func (p *Provider) stsURL() string {
	if p.STSURL != "" {
		return p.STSURL
	}
	return DefaultSTSURL
}

func (p *Provider) iamURL() string {
	if p.IAMCredentialsURL != "" {
		return strings.TrimSuffix(p.IAMCredentialsURL, "/")
	}
	return DefaultIAMCredentialsURL
}

// subjectToken hands STS the ServiceAccount token.
type subjectToken string

func (s subjectToken) SubjectToken(context.Context, externalaccount.SupplierOptions) (string, error) {
	return string(s), nil
}

const serviceAccountEmailPattern = `^[a-zA-Z0-9-]{1,100}@[a-zA-Z0-9-]{1,100}\.iam\.gserviceaccount\.com$`

// Compiled on first use: bounded repetitions compile to a large program
// that every process would otherwise build at start (design 0038).
var serviceAccountEmailRegex = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(serviceAccountEmailPattern) })

const workloadIdentityProviderPattern = `^projects/\d{1,30}/locations/global/workloadIdentityPools/[^/]{1,100}/providers/[^/]{1,100}$`

// Compiled on first use: bounded repetitions compile to a large program
// that every process would otherwise build at start (design 0038).
var workloadIdentityProviderRegex = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(workloadIdentityProviderPattern) })

// annotations reads and checks the two annotations, as Flux does.
func annotations(sa *corev1.ServiceAccount) (email, wip string, err error) {
	email = sa.Annotations[ServiceAccountAnnotation]
	if email != "" && !serviceAccountEmailRegex().MatchString(email) {
		return "", "", fmt.Errorf("invalid %s annotation: '%s'. must match %s", ServiceAccountAnnotation, email, serviceAccountEmailPattern)
	}
	wip = sa.Annotations[WorkloadIdentityProviderAnnotation]
	if wip != "" && !workloadIdentityProviderRegex().MatchString(wip) {
		return "", "", fmt.Errorf("invalid %s annotation: '%s'. must match %s", WorkloadIdentityProviderAnnotation, wip, workloadIdentityProviderPattern)
	}
	return email, wip, nil
}
