package receiver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// googleIssuer is the issuer of the ID tokens Pub/Sub push subscriptions
// send. go-oidc also accepts the scheme-less "accounts.google.com" some of
// them carry, for this issuer only.
const googleIssuer = "https://accounts.google.com"

// maxCachedIssuers bounds the issuer cache; only issuers named by
// Receivers (or Google) are ever looked up.
const maxCachedIssuers = 64

// tokenVerifier verifies OIDC ID tokens against their issuer: discovery
// document, then the keys it names. Each issuer's provider is kept, so
// its keys are fetched once and again only when a token names a key ID
// not seen yet (go-oidc's RemoteKeySet).
type tokenVerifier struct {
	client *http.Client
	// gcrIssuer replaces googleIssuer in tests, which run their own issuer
	// on 127.0.0.1; it is not configurable otherwise.
	gcrIssuer string

	mu        sync.Mutex
	providers map[string]*oidc.Provider
}

func newTokenVerifier() *tokenVerifier {
	return &tokenVerifier{client: &http.Client{Timeout: 10 * time.Second}, providers: map[string]*oidc.Provider{}}
}

// provider returns the issuer's provider, discovering it on first use. A
// failed discovery is not cached.
func (v *tokenVerifier) provider(ctx context.Context, issuer string) (*oidc.Provider, error) {
	v.mu.Lock()
	p, ok := v.providers[issuer]
	v.mu.Unlock()
	if ok {
		return p, nil
	}
	// The key set keeps this context's values (the HTTP client) for its
	// later fetches; go-oidc drops its cancellation.
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, v.client), issuer)
	if err != nil {
		return nil, fmt.Errorf("%w: discovery of %q failed: %w", errIssuerUnavailable, issuer, err)
	}
	v.mu.Lock()
	if len(v.providers) >= maxCachedIssuers {
		clear(v.providers)
	}
	v.providers[issuer] = p
	v.mu.Unlock()
	return p, nil
}

// verify checks raw's signature with the issuer's keys, its issuer, its
// audience and its validity period, and returns its claims.
func (v *tokenVerifier) verify(ctx context.Context, issuer, audience, raw string) (map[string]any, error) {
	p, err := v.provider(ctx, issuer)
	if err != nil {
		return nil, err
	}
	// Verifier shares the provider's key set (and the client it was
	// discovered with) across requests.
	tok, err := p.Verifier(&oidc.Config{ClientID: audience}).Verify(ctx, raw)
	if err != nil {
		return nil, fmt.Errorf("%w: failed to verify OIDC token: %w", errUnauthenticated, err)
	}
	claims := map[string]any{}
	if err := tok.Claims(&claims); err != nil {
		return nil, fmt.Errorf("%w: failed to extract OIDC token claims: %w", errUnauthenticated, err)
	}
	return claims, nil
}

// bearerToken returns the token of an "Authorization: Bearer <token>"
// header.
func bearerToken(h http.Header) (string, error) {
	const prefix = "Bearer "
	auth := h.Get(headerAuthorization)
	if !strings.HasPrefix(auth, prefix) {
		return "", fmt.Errorf("%w: the Authorization header is missing or malformed", errUnauthenticated)
	}
	tok := strings.TrimSpace(auth[len(prefix):])
	if tok == "" {
		return "", fmt.Errorf("%w: the Authorization header is missing a bearer token", errUnauthenticated)
	}
	return tok, nil
}

// unverifiedIssuer reads a JWT's "iss" claim without checking anything:
// it only chooses which configured issuer verifies the token.
func unverifiedIssuer(raw string) (string, error) {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return "", errors.New("token is not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", fmt.Errorf("failed to decode token payload: %w", err)
	}
	var c struct {
		Iss string `json:"iss"`
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return "", fmt.Errorf("failed to parse token payload: %w", err)
	}
	if c.Iss == "" {
		return "", errors.New("token is missing the 'iss' claim")
	}
	return c.Iss, nil
}
