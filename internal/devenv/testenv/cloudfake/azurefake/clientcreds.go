package azurefake

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"net/http"
	"net/url"

	"github.com/golang-jwt/jwt/v5"
)

// Ways a token request authenticated its client, as Request.ClientAuth
// records them.
const (
	AuthFederated   = "federated"   // a ServiceAccount token as client assertion
	AuthSecret      = "secret"      // client_secret
	AuthCertificate = "certificate" // a client assertion signed with a registered certificate
)

// AddClientSecret registers secret as client's: a token request with it
// is answered, one with another secret refused as Entra does.
func (s *Server) AddClientSecret(client, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets[client] = secret
}

// AddClientCertificate registers cert as client's: a client assertion
// that names it by its SHA-256 thumbprint (x5t#S256) and is signed with its
// key (PS256, as MSAL signs) is answered.
func (s *Server) AddClientCertificate(client string, cert *x509.Certificate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.certs[client] = cert
}

// clientCredential answers a client credentials grant that authenticates
// with a client secret or a certificate's assertion; handled is false
// for the federated assertions token handles.
func (s *Server) clientCredential(w http.ResponseWriter, r *http.Request, form url.Values, rec *Request) (handled bool) {
	client, scope := form.Get("client_id"), defaultScope(form.Get("scope"))
	if secret, ok := form["client_secret"]; ok {
		rec.ClientAuth = AuthSecret
		s.mu.Lock()
		want, known := s.secrets[client]
		s.mu.Unlock()
		switch {
		case form.Get("grant_type") != "client_credentials":
			rec.Status = entraError(w, "unsupported_grant_type", 70003, "The app requested an unsupported grant type.")
		case !known || len(secret) != 1 || secret[0] != want:
			rec.Status = entraStatus(w, http.StatusUnauthorized, "invalid_client", 7000215, "Invalid client secret provided.")
		default:
			rec.Status = s.issue(w, client, scope)
		}
		return true
	}
	parsed, _, err := jwt.NewParser().ParseUnverified(form.Get("client_assertion"), jwt.MapClaims{})
	if err != nil {
		return false
	}
	thumb, ok := parsed.Header["x5t#S256"].(string)
	if !ok {
		return false
	}
	rec.ClientAuth = AuthCertificate
	_, rec.X5C = parsed.Header["x5c"]
	s.mu.Lock()
	cert := s.certs[client]
	s.mu.Unlock()
	tokenURL := "https://" + r.Host + r.URL.Path
	var claims jwt.RegisteredClaims
	switch {
	case cert == nil || thumb != thumbprint(cert):
		rec.Status = entraStatus(w, http.StatusUnauthorized, "invalid_client", 700027,
			"The certificate with identifier used to sign the client assertion is not registered on application.")
	case func() error {
		_, err := jwt.ParseWithClaims(form.Get("client_assertion"), &claims, func(*jwt.Token) (any, error) { return cert.PublicKey, nil },
			jwt.WithValidMethods([]string{jwt.SigningMethodPS256.Alg()}), jwt.WithAudience(tokenURL), jwt.WithExpirationRequired())
		return err
	}() != nil:
		rec.Status = entraStatus(w, http.StatusUnauthorized, "invalid_client", 700027, "Client assertion failed signature validation.")
	case claims.Issuer != client || claims.Subject != client:
		rec.Status = entraStatus(w, http.StatusUnauthorized, "invalid_client", 700021, "Client assertion application identifier doesn't match 'client_id' parameter.")
	case form.Get("grant_type") != "client_credentials":
		rec.Status = entraError(w, "unsupported_grant_type", 70003, "The app requested an unsupported grant type.")
	default:
		rec.Status = s.issue(w, client, scope)
	}
	return true
}

// issue answers with client's access token for scope.
func (s *Server) issue(w http.ResponseWriter, client, scope string) int {
	if client == "" || scope == "" {
		return entraError(w, "invalid_request", 900144, "The request body must contain client_id and a /.default scope.")
	}
	if s.denied(client) {
		return entraError(w, "unauthorized_client", 700016, "Application with identifier '"+client+"' was not found in the directory.")
	}
	return writeJSON(w, http.StatusOK, map[string]any{
		"token_type": "Bearer", "expires_in": int(TokenLifetime.Seconds()), "ext_expires_in": int(TokenLifetime.Seconds()),
		"access_token": AccessToken(client, scope),
	})
}

// thumbprint is a certificate's x5t#S256.
func thumbprint(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.Raw)
	// MSAL encodes it with the standard alphabet; accept what it sends.
	return base64.StdEncoding.EncodeToString(sum[:])
}
