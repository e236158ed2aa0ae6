package gcpfake

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// jwtBearerGrant is the OAuth grant of a service account key: a JWT
// signed with the key, exchanged at the key's token_uri.
const jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// KeyToken is the access token the fake's token endpoint gives a JSON
// key of email.
func KeyToken(email string) string { return "ya29.key." + email }

// ServiceAccountKey makes a Google service account JSON key for email
// whose token_uri is the fake's token endpoint (POST /token), which
// accepts only JWTs signed with this key.
func (s *Server) ServiceAccountKey(t testing.TB, email string) []byte {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	if s.keys == nil {
		s.keys = map[string]*rsa.PublicKey{}
	}
	s.keys[email] = &key.PublicKey
	s.mu.Unlock()
	b, err := json.Marshal(map[string]string{
		"type": "service_account", "project_id": s.opts.ProjectID, "private_key_id": "key-1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": email, "client_id": "1234567890", "token_uri": s.URL + "/token",
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// token is the JSON key's exchange: the assertion must be an RS256 JWT
// whose issuer is a key's email, signed with that key, for this audience.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	req := Request{Method: r.Method, Path: r.URL.Path}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != jwtBearerGrant {
		req.Status = http.StatusBadRequest
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		s.record(req)
		return
	}
	var claims jwt.RegisteredClaims
	_, err := jwt.ParseWithClaims(r.PostForm.Get("assertion"), &claims, func(tok *jwt.Token) (any, error) {
		iss, _ := tok.Claims.GetIssuer()
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.keys[iss], nil
	}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithAudience(s.URL+"/token"))
	if err != nil {
		req.Status = http.StatusBadRequest
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "Invalid JWT Signature."})
		s.record(req)
		return
	}
	req.Bearer = claims.Issuer
	req.Status = http.StatusOK
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": KeyToken(claims.Issuer), "token_type": "Bearer", "expires_in": int(TokenLifetime.Seconds()),
	})
	s.record(req)
}
