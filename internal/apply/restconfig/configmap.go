package restconfig

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/runtime/errs"
)

// Keys of a spec.kubeConfig.configMapRef ConfigMap, Flux's.
const (
	KeyProvider           = "provider"
	KeyCluster            = "cluster"
	KeyAddress            = "address"
	KeyCA                 = "ca.crt"
	KeyAudiences          = "audiences"
	KeyServiceAccountName = "serviceAccountName"
)

// The providers a ConfigMap may name.
const (
	ProviderGeneric = "generic"
	ProviderAWS     = "aws"
	ProviderAzure   = "azure"
	ProviderGCP     = "gcp"
)

// clusterAccess is what a ConfigMap says.
type clusterAccess struct {
	key            types.NamespacedName
	provider       string
	address        string // as written: the default audience
	host           string // https URL
	ca             []byte
	audiences      []string
	serviceAccount string
	cluster        string // the cloud's resource name of the cluster
}

// fromConfigMap builds the rest.Config of spec.kubeConfig.configMapRef:
// for provider generic, the ConfigMap's address and CA and a bearer token
// of a ServiceAccount of this cluster (TokenRequest with the ConfigMap's
// audiences, by default the address), which the remote cluster trusts
// through its OIDC configuration. The token is kept in the identity's
// cache and read again for every request, so a health check that outlives
// a token gets a fresh one.
func (r *Resolver) fromConfigMap(ctx context.Context, req Request) (*rest.Config, error) {
	key := types.NamespacedName{Namespace: req.Namespace, Name: req.KubeConfig.ConfigMapRef.Name}
	var cm corev1.ConfigMap
	if err := r.Reader.Get(ctx, key, &cm); err != nil {
		return nil, fmt.Errorf("could not get KubeConfig ConfigMap '%s': %w", key, err)
	}
	a, err := parseClusterAccess(key, cm.Data)
	if err != nil {
		return nil, err
	}
	id, err := r.KubeConfigIdentity.IdentityFor(req.Namespace, a.serviceAccount)
	if errors.Is(err, auth.ErrObjectLevelDisabled) {
		return nil, &errs.Stalling{Err: fmt.Errorf("KubeConfig ConfigMap '%s': %w", key, err), Reason: meta.FeatureGateDisabledReason}
	}
	if err != nil {
		return nil, err
	}
	var tokens tokenSource = &clusterTokens{settings: r.KubeConfigIdentity, id: id, audiences: a.audiences, key: key}
	host, ca := a.host, a.ca
	if a.provider != ProviderGeneric {
		tokens = r.cloudTokens(a, id)
		if host, ca, err = r.cloudEndpoint(ctx, a, id); err != nil {
			return nil, fmt.Errorf("KubeConfig ConfigMap '%s': %w", key, err)
		}
	}
	// The first token is asked for now, so that a failure is the
	// reconcile's error rather than one of a request's.
	if _, err := tokens.get(ctx); err != nil {
		return nil, err
	}
	cfg := &rest.Config{Host: host, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
	cfg.Wrap(func(base http.RoundTripper) http.RoundTripper { return &bearer{base: base, tokens: tokens} })
	return cfg, nil
}

// tokenSource is where the bearer transport takes each request's token.
type tokenSource interface {
	get(ctx context.Context) (auth.Token, error)
}

// parseClusterAccess reads and checks a ConfigMap's keys.
func parseClusterAccess(key types.NamespacedName, data map[string]string) (*clusterAccess, error) {
	a := &clusterAccess{
		key:            key,
		provider:       strings.TrimSpace(data[KeyProvider]),
		address:        strings.TrimSpace(data[KeyAddress]),
		serviceAccount: strings.TrimSpace(data[KeyServiceAccountName]),
	}
	switch a.provider {
	case "":
		return nil, refused("KubeConfig ConfigMap '%s': key '%s' is required (one of aws, azure, gcp or generic)", key, KeyProvider)
	case ProviderAWS, ProviderAzure, ProviderGCP, ProviderGeneric:
	default:
		return nil, refused("KubeConfig ConfigMap '%s': provider '%s' is not one of aws, azure, gcp or generic", key, a.provider)
	}
	if a.address == "" && a.provider == ProviderGeneric {
		return nil, refused("KubeConfig ConfigMap '%s': key '%s' is required for provider 'generic'", key, KeyAddress)
	}
	if a.address != "" {
		var err error
		if a.host, err = clusterHost(a.address); err != nil {
			return nil, refused("KubeConfig ConfigMap '%s': key '%s': %v", key, KeyAddress, err)
		}
	}
	if ca := data[KeyCA]; ca != "" {
		if !strings.Contains(ca, "-----BEGIN CERTIFICATE-----") {
			return nil, refused("KubeConfig ConfigMap '%s': key '%s' holds no PEM certificate", key, KeyCA)
		}
		a.ca = []byte(ca)
	}
	if a.provider != ProviderGeneric {
		if err := a.checkCluster(strings.TrimSpace(data[KeyCluster])); err != nil {
			return nil, err
		}
		return a, nil
	}
	for _, line := range strings.Split(data[KeyAudiences], "\n") {
		if s := strings.TrimSpace(line); s != "" {
			a.audiences = append(a.audiences, s)
		}
	}
	if len(a.audiences) == 0 {
		a.audiences = []string{a.address}
	}
	return a, nil
}

// clusterHost is the API server's https URL: a bare host[:port] gets the
// scheme, anything but https is refused (the bearer token must not travel
// in the clear).
func clusterHost(address string) (string, error) {
	u, err := parseHTTPS(address)
	if err != nil {
		return "", err
	}
	return u.Scheme + "://" + u.Host + strings.TrimSuffix(u.Path, "/"), nil
}

// parseHTTPS parses an API server address, https:// added to a bare
// host[:port], and refuses any other scheme.
func parseHTTPS(address string) (*url.URL, error) {
	if !strings.Contains(address, "://") {
		address = "https://" + address
	}
	u, err := url.Parse(address)
	switch {
	case err != nil:
		return nil, errors.New("not a URL")
	case u.Scheme != "https":
		return nil, fmt.Errorf("scheme '%s' is not https", u.Scheme)
	case u.Host == "":
		return nil, errors.New("no host")
	}
	return u, nil
}

// clusterTokens gets an identity's tokens for a remote cluster, through
// the identity's cache.
type clusterTokens struct {
	settings  *auth.Settings
	id        auth.Identity
	audiences []string
	key       types.NamespacedName
}

func (c *clusterTokens) get(ctx context.Context) (auth.Token, error) {
	var cache *auth.Cache
	if c.settings != nil {
		cache = c.settings.Cache
	}
	cacheKey := "kubeconfig/generic/" + c.id.String() + "/" + strings.Join(c.audiences, "\n")
	tok, err := cache.Get(ctx, cacheKey, func(ctx context.Context) (auth.Token, error) {
		id, err := auth.Subject(c.id)
		if err != nil {
			return auth.Token{}, err
		}
		return c.settings.ServiceAccountToken(ctx, id, c.audiences...)
	})
	if err != nil {
		return auth.Token{}, fmt.Errorf("KubeConfig ConfigMap '%s': %w", c.key, err)
	}
	return tok, nil
}

// bearer sets the identity's current token on every request.
type bearer struct {
	base   http.RoundTripper
	tokens tokenSource
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := b.tokens.get(req.Context())
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+tok.Value)
	return b.base.RoundTrip(r)
}
