// Package oidcissuer is an OpenID Connect issuer for tests. It serves the
// two documents a relying party reads, /.well-known/openid-configuration
// and the JSON Web Key Set it names, on 127.0.0.1, and signs ID tokens
// with an RSA key generated at start. Code that verifies tokens the way
// production does (discovery, then the issuer's keys) is tested against
// it instead of Google or GitHub Actions.
package oidcissuer

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Issuer is a running issuer. URL is its issuer identifier, which tokens
// carry as "iss" and discovery answers with.
type Issuer struct {
	URL string

	kid    string
	key    *rsa.PrivateKey
	signer jose.Signer
	// fetches counts requests for the discovery document and the keys.
	fetches atomic.Int64
}

// Start serves a new issuer until the test ends.
func Start(t testing.TB) *Issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	i := &Issuer{key: key, kid: rand.Text()[:12]}
	i.signer, err = jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", i.kid))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		i.fetches.Add(1)
		writeJSON(w, map[string]any{
			"issuer":                                i.URL,
			"jwks_uri":                              i.URL + "/keys",
			"authorization_endpoint":                i.URL + "/auth",
			"token_endpoint":                        i.URL + "/token",
			"response_types_supported":              []string{"id_token"},
			"subject_types_supported":               []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, _ *http.Request) {
		i.fetches.Add(1)
		writeJSON(w, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{
			Key: &key.PublicKey, KeyID: i.kid, Algorithm: string(jose.RS256), Use: "sig",
		}}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	i.URL = srv.URL
	return i
}

// Claims are the registered claims of a token from this issuer for
// audience, valid for an hour from now, with extra merged in (a nil value
// removes a claim).
func (i *Issuer) Claims(audience string, extra map[string]any) map[string]any {
	now := time.Now()
	c := map[string]any{
		"iss": i.URL, "aud": audience, "sub": "test-subject",
		"iat": now.Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(),
	}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return c
}

// Sign returns claims as a compact JWS signed with the issuer's key.
func (i *Issuer) Sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := i.signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	s, err := obj.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Fetches is how many times the discovery document or the keys were read.
func (i *Issuer) Fetches() int64 { return i.fetches.Load() }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
