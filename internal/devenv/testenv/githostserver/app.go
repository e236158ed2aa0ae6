package githostserver

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/weir-gitops/weir/internal/auth/githubapp"
)

// App is a GitHub App the GitHub server knows: it answers the endpoints
// an App calls with its JWT (GitHub's "Authenticating as a GitHub App"):
// POST /app/installations/{id}/access_tokens, GET
// /orgs/{org}/installation, GET /users/{user}/installation and GET /app.
type App struct {
	ID   int64
	Slug string
	// PublicKey verifies the JWT's RS256 signature.
	PublicKey *rsa.PublicKey
	// Orgs and Users map an owner to its installation's ID.
	Orgs, Users map[string]int64
	// TokenTTL is how long an installation token lasts; an hour, as on
	// GitHub, when zero.
	TokenTTL time.Duration
}

// Minted is an installation token the server issued.
type Minted struct {
	Installation int64
	Token        string
	ExpiresAt    time.Time
}

// maxJWTLifetime is GitHub's limit on exp - iat.
const maxJWTLifetime = 10 * time.Minute

// Minted returns the installation tokens issued so far, oldest first.
func (s *Server) Minted() []Minted {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Minted(nil), s.minted...)
}

// AcceptsToken reports whether token is an installation token the server
// issued and that has not expired: the check a Git server in front of
// the same host makes (gitserver.Options.Accept).
func (s *Server) AcceptsToken(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mintedLive(token)
}

// appEndpoint reports whether p (under /api/v3) is one the App calls
// with its JWT rather than a token.
func appEndpoint(method string, p []string) bool {
	return (method == http.MethodPost && match(p, "app", "installations", "*", "access_tokens")) ||
		(method == http.MethodGet && (match(p, "orgs", "*", "installation") || match(p, "users", "*", "installation") || match(p, "app")))
}

// app answers an App endpoint, after checking the JWT as GitHub does:
// RS256 signed by the App's key, issuer the App's ID, expiring in the
// future and at most ten minutes after it was issued.
func (s *Server) app(w http.ResponseWriter, r *http.Request, p []string) {
	a := s.opts.App
	if a == nil {
		notFound(w)
		return
	}
	if msg := verifyAppJWT(a, r.Header.Get("Authorization")); msg != "" {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": msg})
		return
	}
	switch {
	case match(p, "app"):
		writeJSON(w, http.StatusOK, map[string]any{"id": a.ID, "slug": a.Slug})
	case p[0] == "orgs" || p[0] == "users":
		owners := a.Orgs
		if p[0] == "users" {
			owners = a.Users
		}
		id, ok := owners[p[1]]
		if !ok {
			notFound(w)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "app_id": a.ID, "account": map[string]any{"login": p[1]}})
	default:
		s.mint(w, a, p[2])
	}
}

func (s *Server) mint(w http.ResponseWriter, a *App, rawID string) {
	id, err := strconv.ParseInt(rawID, 10, 64)
	if err != nil || !a.hasInstallation(id) {
		notFound(w)
		return
	}
	buf := make([]byte, 18)
	_, _ = rand.Read(buf)
	ttl := a.TokenTTL
	if ttl == 0 {
		ttl = time.Hour
	}
	m := Minted{Installation: id, Token: "ghs_" + hex.EncodeToString(buf), ExpiresAt: time.Now().Add(ttl).Truncate(time.Second)}
	s.minted = append(s.minted, m)
	writeJSON(w, http.StatusCreated, map[string]any{
		"token": m.Token, "expires_at": m.ExpiresAt.UTC().Format(time.RFC3339),
		"permissions": map[string]string{"contents": "write", "metadata": "read"}, "repository_selection": "all",
	})
}

func (a *App) hasInstallation(id int64) bool {
	for _, owners := range []map[string]int64{a.Orgs, a.Users} {
		for _, v := range owners {
			if v == id {
				return true
			}
		}
	}
	return false
}

// verifyAppJWT returns GitHub's complaint about the JWT in header, ""
// when it is good.
func verifyAppJWT(a *App, header string) string {
	raw, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		return "A JSON web token could not be decoded"
	}
	var claims jwt.RegisteredClaims
	_, err := jwt.ParseWithClaims(raw, &claims, func(*jwt.Token) (any, error) { return a.PublicKey, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(strconv.FormatInt(a.ID, 10)),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt())
	if err != nil {
		return "A JSON web token could not be decoded"
	}
	if claims.IssuedAt == nil || claims.ExpiresAt.Sub(claims.IssuedAt.Time) > maxJWTLifetime {
		return "'Expiration time' claim ('exp') is too far in the future"
	}
	return ""
}

// NewAppKey returns a new App private key and its PEM, for App.PublicKey
// and a Secret's githubAppPrivateKey.
func NewAppKey(t testing.TB) (*rsa.PrivateKey, []byte) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

// AppSecret is the data of a Secret for the server's App signing with
// keyPEM: githubAppID, githubAppPrivateKey, githubAppBaseURL (this
// server's /api/v3) and ca.crt (its TLS certificate). The caller adds the
// installation, by ID or owner.
func (s *Server) AppSecret(keyPEM []byte) map[string][]byte {
	return map[string][]byte{
		githubapp.KeyAppID:      []byte(strconv.FormatInt(s.opts.App.ID, 10)),
		githubapp.KeyPrivateKey: keyPEM,
		githubapp.KeyBaseURL:    []byte("https://" + s.Hostname + "/api/v3"),
		"ca.crt":                s.CAPEM(),
	}
}
