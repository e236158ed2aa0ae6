// Package satoken reads the claims of a Kubernetes ServiceAccount token the
// way a cloud's token service reads a federated subject token: the cloud
// fakes (gcpfake, azurefake) use it to check that what reached them is a
// TokenRequest token of the expected ServiceAccount, bound to the
// cloud's audience. The signature is the API server's and is not checked
// here; tests that need it checked ask the API server (TokenReview).
package satoken

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Claims are the claims of a ServiceAccount token a cloud decides on.
type Claims struct {
	Issuer   string
	Subject  string
	Audience []string
	// Expiry is left out of JSON: goldens of recorded requests stay
	// stable.
	Expiry int64 `json:"-"`
}

// HasAudience reports whether aud is one of the token's audiences.
func (c Claims) HasAudience(aud string) bool { return slices.Contains(c.Audience, aud) }

// Parse decodes a JWT's claims without verifying its signature.
func Parse(token string) (Claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return Claims{}, errors.New("not a JWT: want three dot-separated parts")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return Claims{}, fmt.Errorf("JWT payload: %w", err)
	}
	var raw struct {
		Iss string          `json:"iss"`
		Sub string          `json:"sub"`
		Aud json.RawMessage `json:"aud"`
		Exp int64           `json:"exp"`
	}
	if err := json.Unmarshal(payload, &raw); err != nil {
		return Claims{}, fmt.Errorf("JWT claims: %w", err)
	}
	c := Claims{Issuer: raw.Iss, Subject: raw.Sub, Expiry: raw.Exp}
	var one string
	if err := json.Unmarshal(raw.Aud, &one); err == nil {
		c.Audience = []string{one}
	} else if err := json.Unmarshal(raw.Aud, &c.Audience); err != nil {
		return Claims{}, fmt.Errorf("JWT aud claim: %w", err)
	}
	if c.Subject == "" {
		return Claims{}, errors.New("JWT has no sub claim")
	}
	return c, nil
}

// ServiceAccount returns the "system:serviceaccount:<namespace>:<name>"
// subject of a ServiceAccount's token.
func ServiceAccount(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}
