// Package vaulttransit is a HashiCorp Vault / OpenBao transit engine fake
// on 127.0.0.1 for the SOPS tests: PUT or POST
// /v1/<engine>/encrypt/<key> and /v1/<engine>/decrypt/<key> with the
// X-Vault-Token header checked against the tokens it knows, ciphertexts
// in Vault's "vault:v1:<base64>" form, and Vault's error answers
// ({"errors": [...]}, 403 for a bad token). SOPS reaches it through the
// vault_address its files carry (URL).
package vaulttransit

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

// Request is one call the fake answered or refused.
type Request struct {
	// Method and Path are the HTTP request's.
	Method, Path string
	// Token is the X-Vault-Token header.
	Token string
	// Status is the HTTP status answered.
	Status int
}

// Server is the fake.
type Server struct {
	// URL is the Vault address.
	URL string

	ring   kmscipher.Ring
	mu     sync.Mutex
	tokens map[string]bool
	log    reqlog.Log[Request]
}

// New starts the fake for the test's lifetime; tokens are the valid
// X-Vault-Token values.
func New(t testing.TB, tokens ...string) *Server {
	s := &Server{tokens: map[string]bool{}}
	for _, tok := range tokens {
		s.tokens[tok] = true
	}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Requests returns what the fake was asked so far.
func (s *Server) Requests() []Request { return s.log.All() }

const prefix = "vault:v1:"

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rec := Request{Method: r.Method, Path: r.URL.Path, Token: r.Header.Get("X-Vault-Token")}
	status, body := s.answer(r, rec.Token)
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
	known := s.tokens[token]
	s.mu.Unlock()
	if !known {
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
