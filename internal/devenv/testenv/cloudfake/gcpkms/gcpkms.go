// Package gcpkms is a Google Cloud KMS fake on 127.0.0.1 for the SOPS
// tests. It speaks KMS's REST API (POST
// /v1/projects/*/locations/*/keyRings/*/cryptoKeys/*:encrypt and :decrypt,
// JSON bodies with base64 bytes, Google's error shape) and Google's OAuth
// 2.0 token endpoint for service accounts (the JWT-bearer grant), and
// checks every KMS call's bearer token: one it issued, or a JWT the
// service account signed itself (what the Google SDK sends when it skips
// the token endpoint). Both are RS256, verified with the public half of
// the key AddServiceAccount made. Accept adds tokens another fake issued.
//
// SOPS's GCP key source reaches it with SOPS_GCP_KMS_CLIENT_TYPE=rest and
// SOPS_GCP_KMS_ENDPOINT=URL; the credentials JSON AddServiceAccount
// returns names the fake as its token_uri.
package gcpkms

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/kmscipher"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/reqlog"
)

// Request is one KMS or token call the fake answered or refused.
type Request struct {
	// Operation is "token", "encrypt" or "decrypt".
	Operation string
	// Resource is the crypto key of a KMS call.
	Resource string
	// Principal is the service account the bearer token or assertion
	// belongs to (empty when none verified).
	Principal string
	// Status is the HTTP status answered.
	Status int
}

// Server is the fake.
type Server struct {
	// URL is the base URL of KMS and of the token endpoint (URL+"/token").
	URL string

	ring     kmscipher.Ring
	mu       sync.Mutex
	accounts map[string]*rsa.PublicKey // client_email → key
	tokens   map[string]string         // access token → client_email
	log      reqlog.Log[Request]
}

// New starts the fake for the test's lifetime.
func New(t testing.TB) *Server {
	s := &Server{accounts: map[string]*rsa.PublicKey{}, tokens: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// AddServiceAccount makes a service account with a fresh key and returns
// its credentials JSON, as `gcloud iam service-accounts keys create`
// writes it, with the fake as token_uri.
func (s *Server) AddServiceAccount(t testing.TB, email string) []byte {
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
	s.accounts[email] = &key.PublicKey
	s.mu.Unlock()
	out, err := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "weir-test", "private_key_id": "fake-key-1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": email, "client_id": "1", "token_uri": s.URL + "/token",
		"universe_domain": "googleapis.com",
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Accept makes KMS accept token, issued elsewhere (Google STS or IAM
// Credentials, gcpfake), as principal's: the object-level identity's
// access token.
func (s *Server) Accept(token, principal string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = principal
}

// Requests returns what the fake was asked so far.
func (s *Server) Requests() []Request { return s.log.All() }

func (s *Server) record(r Request) { s.log.Add(r) }

var kmsPath = regexp.MustCompile(`^/v1/(projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/:]+):(encrypt|decrypt)$`)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/token" {
		s.serveToken(w, r)
		return
	}
	m := kmsPath.FindStringSubmatch(r.URL.Path)
	if m == nil || r.Method != http.MethodPost {
		writeError(w, http.StatusNotFound, "NOT_FOUND", "unknown method "+r.Method+" "+r.URL.Path)
		return
	}
	rec := Request{Operation: m[2], Resource: m[1]}
	principal, ok := s.bearer(r.Header.Get("Authorization"))
	rec.Principal = principal
	if !ok {
		rec.Status = http.StatusUnauthorized
		s.record(rec)
		writeError(w, rec.Status, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
		return
	}
	var in struct {
		Plaintext  []byte `json:"plaintext"`
		Ciphertext []byte `json:"ciphertext"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		rec.Status = http.StatusBadRequest
		s.record(rec)
		writeError(w, rec.Status, "INVALID_ARGUMENT", "malformed body")
		return
	}
	var out map[string]any
	switch rec.Operation {
	case "encrypt":
		out = map[string]any{"name": rec.Resource + "/cryptoKeyVersions/1", "ciphertext": s.ring.Seal(rec.Resource, in.Plaintext, nil)}
	default:
		sealedBy, plain, err := s.ring.Open(in.Ciphertext, nil)
		if err != nil || sealedBy != rec.Resource {
			rec.Status = http.StatusBadRequest
			s.record(rec)
			writeError(w, rec.Status, "INVALID_ARGUMENT", "Decryption failed: the ciphertext is invalid.")
			return
		}
		out = map[string]any{"plaintext": plain}
	}
	rec.Status = http.StatusOK
	s.record(rec)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// serveToken answers the JWT-bearer grant with an access token.
func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	rec := Request{Operation: "token"}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		rec.Status = http.StatusBadRequest
		s.record(rec)
		writeOAuthError(w, "unsupported_grant_type")
		return
	}
	email, ok := s.verifyJWT(r.PostForm.Get("assertion"))
	rec.Principal = email
	if !ok {
		rec.Status = http.StatusBadRequest
		s.record(rec)
		writeOAuthError(w, "invalid_grant")
		return
	}
	tok := "ya29.fake-" + base64.RawURLEncoding.EncodeToString([]byte(email+time.Now().String()))
	s.mu.Lock()
	s.tokens[tok] = email
	s.mu.Unlock()
	rec.Status = http.StatusOK
	s.record(rec)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
}

// Principal names the service account an access token was issued to (or
// a self-signed JWT proves), for other fakes that accept the same keys
// (gcsserver).
func (s *Server) Principal(token string) (string, bool) { return s.bearer("Bearer " + token) }

// bearer returns the service account an Authorization header proves.
func (s *Server) bearer(h string) (string, bool) {
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return "", false
	}
	s.mu.Lock()
	email, issued := s.tokens[tok]
	s.mu.Unlock()
	if issued {
		return email, true
	}
	return s.verifyJWT(tok)
}

// verifyJWT checks an RS256 JWT against the key of the service account
// its iss names and returns that account.
func (s *Server) verifyJWT(jwt string) (string, bool) {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return "", false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", false
	}
	var claims struct {
		Iss string `json:"iss"`
		Exp int64  `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Exp < time.Now().Unix() {
		return "", false
	}
	s.mu.Lock()
	pub := s.accounts[claims.Iss]
	s.mu.Unlock()
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if pub == nil || err != nil {
		return claims.Iss, false
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) != nil {
		return claims.Iss, false
	}
	return claims.Iss, true
}

func writeError(w http.ResponseWriter, code int, status, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
}

func writeOAuthError(w http.ResponseWriter, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = fmt.Fprintf(w, `{"error": %q, "error_description": "refused by the fake"}`, code)
}

// The environment variables of SOPS's GCP key source that point it here.
const (
	// ClientTypeEnv set to "rest" makes SOPS use KMS's REST client.
	ClientTypeEnv = "SOPS_GCP_KMS_CLIENT_TYPE"
	// EndpointEnv set to URL overrides the KMS endpoint.
	EndpointEnv = "SOPS_GCP_KMS_ENDPOINT"
)
