package azure

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/golang-jwt/jwt/v5"

	"github.com/weir-gitops/weir/internal/auth"
)

// RegistryUsername is the username that goes with an ACR refresh token.
const RegistryUsername = "00000000-0000-0000-0000-000000000000"

const registryPattern = `^.+\.(azurecr\.io|azurecr\.cn|azurecr\.de|azurecr\.us)$`

// Compiled on first use: bounded repetitions compile to a large program
// that every process would otherwise build at start (design 0038).
var registryRegex = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(registryPattern) })

// ParseRegistry checks registry (a host) is ACR's, with Flux's message
// when it is not.
func ParseRegistry(registry string) error {
	if !registryRegex().MatchString(registry) {
		return fmt.Errorf("invalid Azure registry: '%s'. must match %s", registry, registryPattern)
	}
	return nil
}

// RegistryScope is the scope of the access token ACR exchanges: the
// Resource Manager of the registry's cloud.
func RegistryScope(registry string) string {
	switch {
	case strings.HasSuffix(registry, ".azurecr.cn"):
		return "https://management.chinacloudapi.cn/.default"
	case strings.HasSuffix(registry, ".azurecr.us"):
		return "https://management.usgovcloudapi.net/.default"
	default:
		return "https://management.azure.com/.default"
	}
}

// RegistryLogin returns the login to registry for id: the refresh token
// ACR exchanges the access token for, cached per registry.
func (p *Provider) RegistryLogin(ctx context.Context, registry string, id auth.Identity, s *auth.Settings) (auth.Token, error) {
	if err := ParseRegistry(registry); err != nil {
		return auth.Token{}, err
	}
	key := ProviderName + "|controller"
	if id.ObjectLevel() {
		tenant, client, err := p.identity(ctx, id, s)
		if err != nil {
			return auth.Token{}, err
		}
		key = objectKey(id, tenant, client)
	}
	return cacheOf(s).Get(ctx, key+"|registry="+registry, func(ctx context.Context) (auth.Token, error) {
		access, err := p.AccessToken(ctx, id, s, RegistryScope(registry))
		if err != nil {
			return auth.Token{}, err
		}
		refresh, err := p.exchange(ctx, s.HTTPClient(p.HTTPClient), registry, access.Value)
		if err != nil {
			return auth.Token{}, fmt.Errorf("failed to create artifact registry login: %w", err)
		}
		return refresh, nil
	})
}

// exchange trades an access token for an ACR refresh token, whose expiry
// its JWT claims carry.
func (p *Provider) exchange(ctx context.Context, hc *http.Client, registry, accessToken string) (auth.Token, error) {
	endpoint := "https://" + registry + "/oauth2/exchange"
	form := url.Values{"grant_type": {"access_token"}, "service": {registry}, "access_token": {accessToken}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return auth.Token{}, fmt.Errorf("ACR token exchange at %s: %w", endpoint, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return auth.Token{}, fmt.Errorf("ACR token exchange at %s: %w", endpoint, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return auth.Token{}, fmt.Errorf("ACR token exchange at %s: %w", endpoint, err)
	}
	if resp.StatusCode != http.StatusOK {
		return auth.Token{}, fmt.Errorf("ACR token exchange at %s: %s: %s", endpoint, resp.Status, strings.TrimSpace(string(body[:min(len(body), 512)])))
	}
	var out struct {
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.RefreshToken == "" {
		return auth.Token{}, fmt.Errorf("ACR token exchange at %s: the answer has no refresh_token", endpoint)
	}
	var claims jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(out.RefreshToken, &claims); err != nil || claims.ExpiresAt == nil {
		return auth.Token{}, fmt.Errorf("ACR token exchange at %s: the refresh token is not a JWT with an expiry", endpoint)
	}
	return auth.Token{Username: RegistryUsername, Value: out.RefreshToken, ExpiresAt: claims.ExpiresAt.Time}, nil
}
