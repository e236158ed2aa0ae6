package gcpfake

import (
	"encoding/base64"
	"net/http"
	"strings"
)

// GKECluster is a cluster the fake's GKE API describes.
type GKECluster struct {
	// Endpoint is the API server's address as GKE gives it: an IP, or
	// here 127.0.0.1:PORT.
	Endpoint string
	// CA is the PEM of its certificate authority.
	CA []byte
}

// AddCluster makes clusters.get know the cluster name
// (projects/P/locations/L/clusters/C).
func (s *Server) AddCluster(name string, c GKECluster) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clusters == nil {
		s.clusters = map[string]GKECluster{}
	}
	s.clusters[name] = c
}

// TokenIdentity names whom one of the fake's access tokens stands for:
// "controller", the federated subject, or the impersonated email; ""
// for a token the fake did not issue.
func TokenIdentity(token string) string {
	if token == ControllerToken() {
		return "controller"
	}
	if sub, ok := strings.CutPrefix(token, FederatedToken("")); ok {
		return sub
	}
	if email, ok := strings.CutPrefix(token, ImpersonatedToken("")); ok {
		return email
	}
	return ""
}

// cluster answers the GKE API's GET v1/projects/P/locations/L/clusters/C
// for a bearer token the fake issued.
func (s *Server) cluster(w http.ResponseWriter, r *http.Request) {
	rec := Request{Method: r.Method, Path: r.URL.Path}
	defer func() { s.record(rec) }()
	rec.Bearer = TokenIdentity(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	if rec.Bearer == "" {
		rec.Status = googleError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
		return
	}
	name := strings.TrimPrefix(r.URL.Path, "/v1/")
	s.mu.Lock()
	c, ok := s.clusters[name]
	s.mu.Unlock()
	if !ok {
		rec.Status = googleError(w, http.StatusNotFound, "NOT_FOUND", "Not found: "+name+".")
		return
	}
	rec.Status = http.StatusOK
	parts := strings.Split(name, "/")
	writeJSON(w, http.StatusOK, map[string]any{
		"name": parts[len(parts)-1], "location": parts[3], "status": "RUNNING", "endpoint": c.Endpoint,
		"masterAuth": map[string]string{"clusterCaCertificate": base64.StdEncoding.EncodeToString(c.CA)},
	})
}
