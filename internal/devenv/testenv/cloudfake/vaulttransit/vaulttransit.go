// Package vaulttransit is a HashiCorp Vault / OpenBao transit engine fake
// on 127.0.0.1 for the SOPS tests: PUT or POST
// /v1/<engine>/encrypt/<key> and /v1/<engine>/decrypt/<key> with the
// X-Vault-Token header checked against the tokens it knows, ciphertexts
// in Vault's "vault:v1:<base64>" form, and Vault's error answers
// ({"errors": [...]}, 403 for a bad token). SOPS reaches it through the
// vault_address its files carry (URL). NewTLS serves it over HTTPS, with
// the CA and a client certificate written to files for VAULT_CACERT,
// VAULT_CLIENT_CERT and VAULT_CLIENT_KEY; Revoke and Deny make it refuse
// tokens as Vault does for a revoked token or a role whose policies do not
// cover the key.
package vaulttransit

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/kmscipher"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/reqlog"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/satoken"
)

// Request is one call the fake answered or refused.
type Request struct {
	// Method and Path are the HTTP request's.
	Method, Path string
	// Token is the X-Vault-Token header.
	Token string
	// Status is the HTTP status answered.
	Status int
	// Login is set for a login request: the role asked for and the
	// claims of the JWT presented (never the JWT itself).
	Login *Login
	// TokenRole is the role whose login issued Token, empty for a token
	// given to New.
	TokenRole string
	// ClientCert is whether the TLS client presented a certificate.
	ClientCert bool
}

// Login is what a login request presented.
type Login struct {
	Role     string
	Subject  string
	Audience []string
}

// Role is a login role: the ServiceAccount subject and the audience it
// binds (bound_service_account_names/namespaces and audience in Vault's
// Kubernetes auth method, bound_subject and bound_audiences in its JWT
// method).
type Role struct {
	Subject, Audience string
}

// Review decides whether a JWT presented to the login is valid and returns
// its claims; the Kubernetes auth method asks the API server (TokenReview).
type Review func(jwt string) (satoken.Claims, error)

// Server is the fake.
type Server struct {
	// URL is the Vault address.
	URL string
	// CAFile, CertFile and KeyFile are set by NewTLS: the PEM files of the
	// server's CA, and of a client certificate and its key.
	CAFile, CertFile, KeyFile string

	ring   kmscipher.Ring
	mu     sync.Mutex
	tokens map[string]string // token → the role that logged in, "" for New's
	log    reqlog.Log[Request]

	loginPath string
	review    Review
	roles     map[string]Role
	lease     int
	issued    int
	denied    map[string]bool // roles whose tokens transit refuses
}

// New starts the fake for the test's lifetime; tokens are the valid
// X-Vault-Token values.
func New(t testing.TB, tokens ...string) *Server {
	s := newServer(tokens)
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// TLS configures NewTLS.
type TLS struct {
	// RequireClientCert refuses a handshake without a client
	// certificate, as a Vault listener with
	// tls_require_and_verify_client_cert does. The fake checks that one
	// was presented, not who issued it.
	RequireClientCert bool
}

// NewTLS starts the fake on https://127.0.0.1 for the test's lifetime and
// writes CAFile (the certificate clients must trust), CertFile and
// KeyFile (a client certificate and its key).
func NewTLS(t testing.TB, o TLS, tokens ...string) *Server {
	t.Helper()
	s := newServer(tokens)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	if o.RequireClientCert {
		srv.TLS.ClientAuth = tls.RequireAnyClientCert
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	cert := srv.TLS.Certificates[0]
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
	s.CAFile, s.CertFile, s.KeyFile = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
	for file, data := range map[string][]byte{s.CAFile: certPEM, s.CertFile: certPEM,
		s.KeyFile: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key})} {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func newServer(tokens []string) *Server {
	s := &Server{tokens: map[string]string{}, roles: map[string]Role{}, denied: map[string]bool{}}
	for _, tok := range tokens {
		s.tokens[tok] = ""
	}
	return s
}

// Revoke invalidates token: transit answers it 403 permission denied, as
// Vault does for a revoked or expired token.
func (s *Server) Revoke(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tokens, token)
}

// Deny makes transit refuse every token role's login issues, now and
// later (403 permission denied), as Vault does when the role's policies
// do not cover the key.
func (s *Server) Deny(role string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.denied[role] = true
}

// EnableLogin serves the auth method's login at /v1/<loginPath>,
// validating JWTs with review and issuing tokens with a lease of
// leaseSeconds.
func (s *Server) EnableLogin(loginPath string, leaseSeconds int, review Review) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loginPath, s.lease, s.review = "/v1/"+strings.Trim(loginPath, "/"), leaseSeconds, review
}

// AddRole adds a login role.
func (s *Server) AddRole(name string, r Role) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roles[name] = r
}

// Logins returns the login requests, answered or refused.
func (s *Server) Logins() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Login != nil {
			out = append(out, r)
		}
	}
	return out
}

// Requests returns what the fake was asked so far.
func (s *Server) Requests() []Request { return s.log.All() }

const prefix = "vault:v1:"

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rec := Request{Method: r.Method, Path: r.URL.Path, Token: r.Header.Get("X-Vault-Token"),
		ClientCert: r.TLS != nil && len(r.TLS.PeerCertificates) > 0}
	var status int
	var body any
	s.mu.Lock()
	isLogin := s.loginPath != "" && r.URL.Path == s.loginPath
	rec.TokenRole = s.tokens[rec.Token]
	s.mu.Unlock()
	if isLogin {
		rec.Login = &Login{}
		status, body = s.login(r, rec.Login)
	} else {
		status, body = s.answer(r, rec.Token)
	}
	rec.Status = status
	s.log.Add(rec)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func vaultErrors(msg string) map[string]any { return map[string]any{"errors": []string{msg}} }

func (s *Server) answer(r *http.Request, token string) (int, any) {
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		return http.StatusMethodNotAllowed, vaultErrors("unsupported operation")
	}
	s.mu.Lock()
	role, known := s.tokens[token]
	denied := s.denied[role] && role != ""
	s.mu.Unlock()
	if !known || denied {
		return http.StatusForbidden, vaultErrors("permission denied")
	}
	// /v1/<engine path, may hold slashes>/<op>/<key>
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/"), "/")
	if len(parts) < 3 {
		return http.StatusNotFound, vaultErrors("no handler for route")
	}
	op, key := parts[len(parts)-2], parts[len(parts)-1]
	engine := strings.Join(parts[:len(parts)-2], "/")
	var in struct {
		Plaintext  string `json:"plaintext"`
		Ciphertext string `json:"ciphertext"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		return http.StatusBadRequest, vaultErrors("failed to parse JSON input")
	}
	name := engine + "/" + key
	switch op {
	case "encrypt":
		plain, err := base64.StdEncoding.DecodeString(in.Plaintext)
		if err != nil {
			return http.StatusBadRequest, vaultErrors("failed to base64-decode plaintext")
		}
		blob := s.ring.Seal(name, plain, nil)
		return http.StatusOK, map[string]any{"data": map[string]any{"ciphertext": prefix + base64.StdEncoding.EncodeToString(blob), "key_version": 1}}
	case "decrypt":
		raw, ok := strings.CutPrefix(in.Ciphertext, prefix)
		blob, err := base64.StdEncoding.DecodeString(raw)
		if !ok || err != nil {
			return http.StatusBadRequest, vaultErrors("invalid ciphertext: no prefix")
		}
		sealedBy, plain, err := s.ring.Open(blob, nil)
		if err != nil || sealedBy != name {
			return http.StatusBadRequest, vaultErrors("cipher: message authentication failed")
		}
		return http.StatusOK, map[string]any{"data": map[string]any{"plaintext": base64.StdEncoding.EncodeToString(plain)}}
	}
	return http.StatusNotFound, vaultErrors("no handler for route")
}

// login answers a login request and records what it presented in rec.
func (s *Server) login(r *http.Request, rec *Login) (int, any) {
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		return http.StatusMethodNotAllowed, vaultErrors("unsupported operation")
	}
	var in struct {
		Role string `json:"role"`
		JWT  string `json:"jwt"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		return http.StatusBadRequest, vaultErrors("failed to parse JSON input")
	}
	rec.Role = in.Role
	if in.JWT == "" {
		return http.StatusBadRequest, vaultErrors("missing jwt")
	}
	s.mu.Lock()
	role, ok := s.roles[in.Role]
	review := s.review
	s.mu.Unlock()
	if in.Role == "" || !ok {
		return http.StatusBadRequest, vaultErrors(fmt.Sprintf("invalid role name %q", in.Role))
	}
	claims, err := satoken.Parse(in.JWT)
	if err == nil && review != nil {
		claims, err = review(in.JWT)
	}
	if err != nil {
		return http.StatusForbidden, vaultErrors("permission denied")
	}
	rec.Subject, rec.Audience = claims.Subject, claims.Audience
	switch {
	case claims.Subject != role.Subject:
		return http.StatusForbidden, vaultErrors("service account name not authorized")
	case !claims.HasAudience(role.Audience):
		return http.StatusForbidden, vaultErrors("invalid audience (aud) claim: audience claim does not match any expected audience")
	}
	s.mu.Lock()
	s.issued++
	token := fmt.Sprintf("hvs.login-%d", s.issued)
	s.tokens[token] = in.Role
	lease := s.lease
	s.mu.Unlock()
	return http.StatusOK, map[string]any{"auth": map[string]any{
		"client_token": token, "accessor": "accessor-" + token, "policies": []string{"default", "sops"},
		"lease_duration": lease, "renewable": true, "metadata": map[string]string{"role": in.Role},
	}}
}

// TokenReview is the Review of Vault's Kubernetes auth method: it asks
// the API server c talks to (a TokenReview for audience) whether the JWT
// is one of its ServiceAccount tokens, and takes the subject and
// audiences from the answer rather than from the unverified claims.
func TokenReview(c client.Client, audience string) Review {
	return func(jwt string) (satoken.Claims, error) {
		tr := &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: jwt, Audiences: []string{audience}}}
		if err := c.Create(context.Background(), tr); err != nil {
			return satoken.Claims{}, err
		}
		if !tr.Status.Authenticated {
			return satoken.Claims{}, fmt.Errorf("token review: not authenticated: %s", tr.Status.Error)
		}
		return satoken.Claims{Subject: tr.Status.User.Username, Audience: tr.Status.Audiences}, nil
	}
}
