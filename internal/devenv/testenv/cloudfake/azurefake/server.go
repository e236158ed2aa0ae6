package azurefake

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	authazure "github.com/weir-gitops/weir/internal/auth/azure"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/reqlog"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/satoken"
)

// TokenExchangeAudience is the audience Entra requires of a federated
// client assertion.
const TokenExchangeAudience = "api://AzureADTokenExchange"

// IdentityHeader is the managed identity endpoint's secret header value.
const IdentityHeader = "azurefake-identity-header"

// TokenLifetime is the lifetime of the access tokens the fake issues;
// refresh tokens live three hours, as ACR's do.
const TokenLifetime = time.Hour

// Request is one request the fake answered, without its tokens.
type Request struct {
	Method, Host, Path string
	// Query is a GET request's query.
	Query url.Values `json:",omitempty"`
	// Form is a POST request's form without its tokens.
	Form url.Values `json:",omitempty"`
	// Assertion is the token request's client assertion, decoded.
	Assertion *satoken.Claims `json:",omitempty"`
	// ClientAuth is how a token request authenticated its client
	// (AuthFederated, AuthSecret, AuthCertificate); X5C whether a
	// certificate's assertion carried its chain (x5c).
	ClientAuth string `json:",omitempty"`
	X5C        bool   `json:",omitempty"`
	// AccessToken is the identity the ACR exchange's access token stands for.
	AccessToken string `json:",omitempty"`
	Status      int
}

// Server is a running fake.
type Server struct {
	// URL is https://127.0.0.1:PORT/, what AZURE_AUTHORITY_HOST takes.
	URL string

	srv     *httptest.Server
	client  *http.Client
	mu      sync.Mutex
	log     reqlog.Log[Request]
	refresh map[string]string
	deny    map[string]bool
	secrets map[string]string
	certs   map[string]*x509.Certificate

	clusters map[string]AKSCluster // by lower-case resource ID (aks.go)
}

// Start serves a fake until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	cert, pool, err := newCertificate()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{refresh: map[string]string{}, deny: map[string]bool{}, secrets: map[string]string{}, certs: map[string]*x509.Certificate{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /common/discovery/instance", s.instanceDiscovery)
	mux.HandleFunc("GET /{tenant}/v2.0/.well-known/openid-configuration", s.openIDConfiguration)
	mux.HandleFunc("POST /{tenant}/oauth2/v2.0/token", s.token)
	mux.HandleFunc("GET /msi/token", s.managedIdentity)
	mux.HandleFunc("POST /oauth2/exchange", s.exchange)
	mux.HandleFunc("/subscriptions/{sub}/resourceGroups/{group}/providers/Microsoft.ContainerService/managedClusters/{rest...}", s.arm)
	s.srv = httptest.NewUnstartedServer(mux)
	s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL + "/"
	s.client = client(pool, s.srv.Listener.Addr().String())
	return s
}

// Client trusts the fake and sends every named host to it.
func (s *Server) Client() *http.Client { return s.client }

// Addr is the fake's host:port, where a test proxy tunnels the CONNECTs
// of clients that reach the fake's hosts through it
// (awsfake.ProxyOptions.Tunnel).
func (s *Server) Addr() string { return s.srv.Listener.Addr().String() }

// ManagedIdentityEndpoint is what IDENTITY_ENDPOINT takes.
func (s *Server) ManagedIdentityEndpoint() string { return s.srv.URL + "/msi/token" }

// AccessToken is the Entra access token of client for scope.
func AccessToken(client, scope string) string { return "entra." + client + "." + scope }

// ManagedIdentityClient is the client id the managed identity endpoint
// issues tokens as when the request names none.
const ManagedIdentityClient = "system-assigned"

// RefreshToken is the ACR refresh token of client for registry: a JWT
// whose exp claim says when it expires (three hours, as ACR's), minted on
// first use, so a test can start a registry that accepts it before the
// exchange happens. It is unsigned and its subject a hash of client and
// registry, to stay under the 72 bytes a test registry's bcrypt'd
// password can be.
func (s *Server) RefreshToken(client, registry string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := client + "@" + registry
	if tok, ok := s.refresh[key]; ok {
		return tok
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	claims := fmt.Sprintf(`{"exp":%d,"sub":"%08x"}`, time.Now().Add(3*time.Hour).Unix(), h.Sum32())
	enc := base64.RawURLEncoding
	tok := enc.EncodeToString([]byte(`{"alg":"none"}`)) + "." + enc.EncodeToString([]byte(claims)) + "."
	s.refresh[key] = tok
	return tok
}

// Deny makes the token endpoint refuse client, as Entra does an
// application it does not know.
func (s *Server) Deny(client string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deny[client] = true
}

func (s *Server) denied(client string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deny[client]
}

// Requests returns the requests answered so far, in order.
func (s *Server) Requests() []Request { return s.log.All() }

// Count is the number of requests answered whose path ends with suffix.
func (s *Server) Count(suffix string) int {
	return s.log.Count(func(r Request) bool { return strings.HasSuffix(r.Path, suffix) })
}

func (s *Server) record(r Request) { s.log.Add(r) }

func writeJSON(w http.ResponseWriter, status int, v any) int {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
	return status
}

// credentialEnv are the variables azidentity's credentials read.
var credentialEnv = []string{
	"AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_CLIENT_SECRET",
	"AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_USERNAME", "AZURE_AUTHORITY_HOST",
	"IDENTITY_ENDPOINT", "IDENTITY_HEADER", "MSI_ENDPOINT", "IMDS_ENDPOINT",
}

// SetenvAuthority unsets the Azure credential variables for the rest of
// the test and makes the fake the authority host (AZURE_AUTHORITY_HOST).
func (s *Server) SetenvAuthority(t testing.TB) {
	unsetCredentialEnv(t)
	t.Setenv("AZURE_AUTHORITY_HOST", s.URL)
}

// SetenvManagedIdentity unsets the Azure credential variables for the
// rest of the test and names the fake's managed identity endpoint.
func (s *Server) SetenvManagedIdentity(t testing.TB) {
	unsetCredentialEnv(t)
	t.Setenv("IDENTITY_ENDPOINT", s.ManagedIdentityEndpoint())
	t.Setenv("IDENTITY_HEADER", IdentityHeader)
}

// unsetCredentialEnv unsets (not empties: azidentity tells the two apart)
// the variables until the test ends.
func unsetCredentialEnv(t testing.TB) {
	for _, v := range credentialEnv {
		t.Setenv(v, "")
		_ = os.Unsetenv(v)
	}
}

// Install makes the fake the authority host (SetenvAuthority) and has
// internal/auth/azure's Default provider, which controllers use, reach
// Azure through c (nil: Client, every host to this fake) until the test
// ends.
func (s *Server) Install(t testing.TB, c *http.Client) {
	s.SetenvAuthority(t)
	if c == nil {
		c = s.client
	}
	saved := authazure.Default.HTTPClient
	authazure.Default.HTTPClient = c
	t.Cleanup(func() { authazure.Default.HTTPClient = saved })
}
