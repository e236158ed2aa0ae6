// Package azurekv is an Azure Key Vault and Entra ID fake on 127.0.0.1
// (TLS, as both SDKs require) for the SOPS tests: Key Vault's REST API
// (POST /keys/<name>/<version>/encrypt and decrypt, which SOPS uses, and
// wrapkey and unwrapkey, GET /keys/<name>,
// base64url values, the 401 bearer challenge naming the tenant), and the
// Entra endpoints a client-secret credential uses (OpenID discovery and
// the client-credentials token grant). Key Vault calls must carry a token
// the fake issued for a client id and secret it knows, or one Accept
// names.
package azurekv

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/kmscipher"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/reqlog"
)

// Tenant is the directory the fake's challenge names.
const Tenant = "00000000-0000-0000-0000-00000000feed"

// Request is one call the fake answered or refused.
type Request struct {
	// Operation is "token", "encrypt", "decrypt", "wrapkey", "unwrapkey",
	// "get" or "discovery".
	Operation string
	// Key is a Key Vault call's key name; Client the client id a token
	// was issued to (or is asked for).
	Key, Client string
	// Status is the HTTP status answered.
	Status int
}

// Server is the fake.
type Server struct {
	// URL is both the vault URL and the authority host.
	URL string
	// Client trusts the fake's certificate.
	Client *http.Client

	ring    kmscipher.Ring
	log     reqlog.Log[Request]
	mu      sync.Mutex
	secrets map[string]string // client id → secret
	tokens  map[string]string // access token → client id
}

// New starts the fake for the test's lifetime; clients are client id →
// secret pairs it accepts.
func New(t testing.TB, clients map[string]string) *Server {
	s := &Server{secrets: clients, tokens: map[string]string{}}
	srv := httptest.NewTLSServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL, s.Client = srv.URL, srv.Client()
	return s
}

// Accept makes Key Vault accept token, issued by another Entra fake
// (azurefake, for a federated client assertion), as client's.
func (s *Server) Accept(token, client string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = client
}

// Requests returns what the fake was asked so far.
func (s *Server) Requests() []Request { return s.log.All() }

func (s *Server) reply(w http.ResponseWriter, rec Request, status int, body any) {
	rec.Status = status
	s.log.Add(rec)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasSuffix(r.URL.Path, "/v2.0/.well-known/openid-configuration"):
		base := s.URL + "/" + Tenant
		s.reply(w, Request{Operation: "discovery"}, http.StatusOK, map[string]any{
			"token_endpoint": base + "/oauth2/v2.0/token", "authorization_endpoint": base + "/oauth2/v2.0/authorize",
			"issuer": base + "/v2.0", "tenant_region_scope": "WW"})
	case strings.HasSuffix(r.URL.Path, "/oauth2/v2.0/token"):
		s.serveToken(w, r)
	case strings.HasPrefix(r.URL.Path, "/keys/"):
		s.serveKey(w, r)
	default:
		s.reply(w, Request{Operation: r.URL.Path}, http.StatusNotFound, map[string]any{"error": "not_found"})
	}
}

func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	rec := Request{Operation: "token", Client: r.PostForm.Get("client_id")}
	s.mu.Lock()
	secret, known := s.secrets[rec.Client]
	s.mu.Unlock()
	if r.PostForm.Get("grant_type") != "client_credentials" || !known || secret != r.PostForm.Get("client_secret") {
		s.reply(w, rec, http.StatusUnauthorized, map[string]any{"error": "invalid_client",
			"error_description": "AADSTS7000215: Invalid client secret provided.", "error_codes": []int{7000215}})
		return
	}
	tok := "eyJ.fake." + base64.RawURLEncoding.EncodeToString([]byte(rec.Client))
	s.mu.Lock()
	s.tokens[tok] = rec.Client
	s.mu.Unlock()
	s.reply(w, rec, http.StatusOK, map[string]any{"token_type": "Bearer", "expires_in": 3600, "ext_expires_in": 3600, "access_token": tok})
}

func (s *Server) serveKey(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/keys/"), "/")
	rec := Request{Operation: "get", Key: parts[0]}
	if len(parts) == 3 {
		rec.Operation = parts[2]
	}
	tok, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	client, ok := s.tokens[tok]
	s.mu.Unlock()
	rec.Client = client
	if !bearer || !ok {
		w.Header().Set("WWW-Authenticate", `Bearer authorization="`+s.URL+`/`+Tenant+`", resource="https://vault.azure.net"`)
		s.reply(w, rec, http.StatusUnauthorized, map[string]any{"error": map[string]string{"code": "Unauthorized", "message": "AKV10000: Request is missing a Bearer or PoP token."}})
		return
	}
	kid := s.URL + "/keys/" + rec.Key + "/1"
	var in struct {
		Alg   string `json:"alg"`
		Value string `json:"value"`
	}
	if rec.Operation != "get" {
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			s.reply(w, rec, http.StatusBadRequest, map[string]any{"error": map[string]string{"code": "BadParameter"}})
			return
		}
	}
	value, err := base64.RawURLEncoding.DecodeString(in.Value)
	switch {
	case rec.Operation == "get":
		s.reply(w, rec, http.StatusOK, map[string]any{"key": map[string]any{"kid": kid, "kty": "RSA"}})
	case err != nil:
		s.reply(w, rec, http.StatusBadRequest, map[string]any{"error": map[string]string{"code": "BadParameter"}})
	case rec.Operation == "wrapkey", rec.Operation == "encrypt":
		s.reply(w, rec, http.StatusOK, map[string]any{"kid": kid, "value": base64.RawURLEncoding.EncodeToString(s.ring.Seal(rec.Key, value, []byte(in.Alg)))})
	case rec.Operation == "unwrapkey", rec.Operation == "decrypt":
		_, plain, err := s.ring.Open(value, []byte(in.Alg))
		if err != nil {
			s.reply(w, rec, http.StatusBadRequest, map[string]any{"error": map[string]string{"code": "BadParameter", "message": "The parameter is incorrect."}})
			return
		}
		s.reply(w, rec, http.StatusOK, map[string]any{"kid": kid, "value": base64.RawURLEncoding.EncodeToString(plain)})
	default:
		s.reply(w, rec, http.StatusNotFound, map[string]any{"error": map[string]string{"code": "NotFound"}})
	}
}
