package gcpfake

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	authgcp "github.com/weir-gitops/weir/internal/auth/gcp"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/reqlog"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/satoken"
)

// Options name the GKE cluster the metadata server describes.
type Options struct {
	ProjectID, Location, Cluster string
	// ControllerEmail is the Google service account the Pod runs as.
	ControllerEmail string
}

// Request is one request the fake answered, without its credentials.
type Request struct {
	Method, Path string
	// Query is the metadata request's query (the token's scopes).
	Query url.Values `json:",omitempty"`
	// MetadataFlavor is the Metadata-Flavor header.
	MetadataFlavor string `json:",omitempty"`
	// Form is the STS request's form without subject_token.
	Form url.Values `json:",omitempty"`
	// Subject is the STS request's subject token, decoded.
	Subject *satoken.Claims `json:",omitempty"`
	// Bearer is the identity the Authorization header's token stands for.
	Bearer string `json:",omitempty"`
	// Body is the IAM Credentials request's JSON body.
	Body map[string]any `json:",omitempty"`
	// Status is the HTTP status answered.
	Status int
}

// Server is a running fake.
type Server struct {
	// URL is the base of STS, IAM Credentials and the GKE API,
	// http://127.0.0.1:PORT.
	URL string
	// Host is 127.0.0.1:PORT, what GCE_METADATA_HOST takes.
	Host string

	opts Options
	mu   sync.Mutex
	log  reqlog.Log[Request]
	deny map[string]bool

	clusters map[string]GKECluster // by resource name (gke.go)
}

// TokenLifetime is the lifetime of every access token the fake issues.
const TokenLifetime = time.Hour

// Start serves a fake until the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.ProjectID == "" {
		opts.ProjectID = "weir-project"
	}
	if opts.Location == "" {
		opts.Location = "europe-west1"
	}
	if opts.Cluster == "" {
		opts.Cluster = "weir"
	}
	if opts.ControllerEmail == "" {
		opts.ControllerEmail = "flux@" + opts.ProjectID + ".iam.gserviceaccount.com"
	}
	s := &Server{opts: opts, deny: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/computeMetadata/v1/", s.metadata)
	mux.HandleFunc("POST /v1/token", s.sts)
	mux.HandleFunc("POST /v1/projects/-/serviceAccounts/{action}", s.generateAccessToken)
	mux.HandleFunc("GET /v1/projects/{project}/locations/{location}/clusters/{cluster}", s.cluster)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	s.Host = strings.TrimPrefix(srv.URL, "http://")
	return s
}

// WorkloadIdentityPool is the GKE cluster's pool, the audience of the
// ServiceAccount token.
func (s *Server) WorkloadIdentityPool() string { return s.opts.ProjectID + ".svc.id.goog" }

// IdentityNamespace is the STS audience of a GKE cluster's tokens.
func (s *Server) IdentityNamespace() string {
	return "identitynamespace:" + s.WorkloadIdentityPool() + ":https://container.googleapis.com/v1/projects/" +
		s.opts.ProjectID + "/locations/" + s.opts.Location + "/clusters/" + s.opts.Cluster
}

// ControllerToken is the access token the metadata server gives the Pod.
func ControllerToken() string { return "ya29.metadata-controller" }

// FederatedToken is the access token STS gives the subject sub.
func FederatedToken(sub string) string { return "ya29.federated." + sub }

// ImpersonatedToken is the access token IAM Credentials gives for email.
func ImpersonatedToken(email string) string { return "ya29.impersonated." + email }

// Deny makes IAM Credentials refuse to impersonate email (403), as it does
// when the federated identity lacks roles/iam.workloadIdentityUser.
func (s *Server) Deny(email string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deny[email] = true
}

// Requests returns the requests answered so far, in order.
func (s *Server) Requests() []Request { return s.log.All() }

// Count is the number of requests answered whose path starts with prefix.
func (s *Server) Count(prefix string) int {
	return s.log.Count(func(r Request) bool { return strings.HasPrefix(r.Path, prefix) })
}

func (s *Server) record(r Request) { s.log.Add(r) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Setenv points Google's application default credentials at the fake's
// metadata server for the rest of the test: GCE_METADATA_HOST, and no
// credentials file (GOOGLE_APPLICATION_CREDENTIALS empty, HOME without
// gcloud's).
func (s *Server) Setenv(t testing.TB) {
	t.Setenv("GCE_METADATA_HOST", s.Host)
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	t.Setenv("HOME", t.TempDir())
}

// Install points Google's application default credentials (Setenv) and
// internal/auth/gcp's Default provider, which controllers use for
// object-level identity, at the fake until the test ends.
func (s *Server) Install(t testing.TB) {
	s.Setenv(t)
	sts, iam := authgcp.Default.STSURL, authgcp.Default.IAMCredentialsURL
	authgcp.Default.STSURL, authgcp.Default.IAMCredentialsURL = s.URL+"/v1/token", s.URL
	t.Cleanup(func() { authgcp.Default.STSURL, authgcp.Default.IAMCredentialsURL = sts, iam })
}
