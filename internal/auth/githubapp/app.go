package githubapp

import (
	"crypto/rsa"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Keys of a Provider Secret holding App credentials; the names are Flux's.
const (
	KeyAppID             = "githubAppID"
	KeyInstallationID    = "githubAppInstallationID"
	KeyInstallationOwner = "githubAppInstallationOwner"
	KeyPrivateKey        = "githubAppPrivateKey"
	KeyBaseURL           = "githubAppBaseURL"
)

// DefaultBaseURL is the API App tokens are asked from when the Secret
// names no githubAppBaseURL: github.com's, as in Flux.
const DefaultBaseURL = "https://api.github.com/"

// ErrInvalid marks App credentials that cannot work: the error names the
// key to fix, never its value.
var ErrInvalid = errors.New("invalid github app credentials")

// App is a GitHub App installation's credentials. It holds the private
// key: never log it or put it in an error.
type App struct {
	// ID is the App's ID, the JWT's issuer.
	ID int64
	// InstallationID names the installation; when zero,
	// InstallationOwner (an organization or user) is looked up instead.
	InstallationID    int64
	InstallationOwner string
	// BaseURL is the API's base URL (https://HOST/api/v3 for GitHub
	// Enterprise Server); empty means DefaultBaseURL.
	BaseURL string

	privateKey []byte
	key        *rsa.PrivateKey
}

// FromSecret reads App credentials from a Provider Secret's data. It
// returns nil and no error when the Secret has no githubAppID key: the
// Provider authenticates with a token, if at all.
func FromSecret(data map[string][]byte) (*App, error) {
	rawID, ok := data[KeyAppID]
	if !ok {
		return nil, nil
	}
	a := &App{
		InstallationOwner: strings.TrimSpace(string(data[KeyInstallationOwner])),
		BaseURL:           strings.TrimSpace(string(data[KeyBaseURL])),
		privateKey:        data[KeyPrivateKey],
	}
	var err error
	if a.ID, err = parseID(rawID, KeyAppID); err != nil {
		return nil, err
	}
	if raw := strings.TrimSpace(string(data[KeyInstallationID])); raw != "" {
		if a.InstallationID, err = parseID([]byte(raw), KeyInstallationID); err != nil {
			return nil, err
		}
	}
	switch {
	case a.InstallationID == 0 && a.InstallationOwner == "":
		return nil, fmt.Errorf("%w: %s or %s is required", ErrInvalid, KeyInstallationID, KeyInstallationOwner)
	case a.InstallationID != 0 && a.InstallationOwner != "":
		return nil, fmt.Errorf("%w: set only one of %s and %s", ErrInvalid, KeyInstallationID, KeyInstallationOwner)
	}
	if len(a.privateKey) == 0 {
		return nil, fmt.Errorf("%w: %s is required", ErrInvalid, KeyPrivateKey)
	}
	if a.key, err = jwt.ParseRSAPrivateKeyFromPEM(a.privateKey); err != nil {
		// The parser's error says what is wrong with the PEM, not what it holds.
		return nil, fmt.Errorf("%w: %s is not a PEM RSA private key", ErrInvalid, KeyPrivateKey)
	}
	return a, nil
}

func parseID(raw []byte, key string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("%w: %s is not a positive number", ErrInvalid, key)
	}
	return id, nil
}

// Secrets returns the App's private key, for scrubbing.
func (a *App) Secrets() []string {
	if a == nil || len(a.privateKey) == 0 {
		return nil
	}
	return []string{string(a.privateKey), strings.TrimSpace(string(a.privateKey))}
}

// baseURL is the API's base URL with the slash go-github needs.
func (a *App) baseURL() string {
	if a.BaseURL == "" {
		return DefaultBaseURL
	}
	return strings.TrimSuffix(a.BaseURL, "/") + "/"
}

// jwtLifetime and jwtSkew are Flux's: the JWT is only traded for a token
// at once, and its issue time is set back for clocks a little ahead.
const (
	jwtLifetime = 2 * time.Minute
	jwtSkew     = 30 * time.Second
)

// signJWT returns the App's JWT as GitHub documents it: RS256, issuer the
// App's ID, issued and expiring in whole seconds.
func (a *App) signJWT(now time.Time) (string, error) {
	iat := now.Truncate(time.Second).Add(-jwtSkew)
	claims := jwt.RegisteredClaims{
		Issuer:    strconv.FormatInt(a.ID, 10),
		IssuedAt:  jwt.NewNumericDate(iat),
		ExpiresAt: jwt.NewNumericDate(iat.Add(jwtLifetime)),
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(a.key)
	if err != nil {
		return "", errors.New("signing the github app jwt failed")
	}
	return s, nil
}
