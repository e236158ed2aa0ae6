package gcpfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/satoken"
)

// metadata answers the GKE metadata server's paths.
func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	rec := Request{Method: r.Method, Path: r.URL.Path, MetadataFlavor: r.Header.Get("Metadata-Flavor")}
	if q := r.URL.Query(); len(q) > 0 {
		rec.Query = q
	}
	status, body, ctype := s.metadataAnswer(r)
	rec.Status = status
	s.record(rec)
	w.Header().Set("Metadata-Flavor", "Google")
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (s *Server) metadataAnswer(r *http.Request) (int, []byte, string) {
	if r.Header.Get("Metadata-Flavor") != "Google" {
		return http.StatusForbidden, []byte("Missing Metadata-Flavor:Google header.\n"), "text/plain"
	}
	text := map[string]string{
		"project/project-id":                         s.opts.ProjectID,
		"instance/attributes/cluster-location":       s.opts.Location,
		"instance/attributes/cluster-name":           s.opts.Cluster,
		"instance/service-accounts/default/email":    s.opts.ControllerEmail,
		"instance/service-accounts/default/aliases":  "default",
		"instance/service-accounts/default/identity": "",
	}
	path := strings.TrimPrefix(r.URL.Path, "/computeMetadata/v1/")
	if path == "instance/service-accounts/default/token" {
		body, _ := json.Marshal(map[string]any{
			"access_token": ControllerToken(), "expires_in": int(TokenLifetime.Seconds()), "token_type": "Bearer",
		})
		return http.StatusOK, body, "application/json"
	}
	if v, ok := text[path]; ok && v != "" {
		return http.StatusOK, []byte(v), "application/text"
	}
	return http.StatusNotFound, []byte("not found\n"), "text/plain"
}

// stsError answers as Google STS does: an OAuth error object.
func stsError(w http.ResponseWriter, code, description string) int {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": description})
	return http.StatusBadRequest
}

// sts answers POST /v1/token, an RFC 8693 token exchange.
func (s *Server) sts(w http.ResponseWriter, r *http.Request) {
	rec := Request{Method: r.Method, Path: r.URL.Path}
	defer func() { s.record(rec) }()
	if err := r.ParseForm(); err != nil {
		rec.Status = stsError(w, "invalid_request", err.Error())
		return
	}
	form := r.PostForm
	subject := form.Get("subject_token")
	rec.Form = cloneWithout(form, "subject_token")
	claims, err := satoken.Parse(subject)
	if err == nil {
		rec.Subject = &claims
	}
	switch {
	case form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange":
		rec.Status = stsError(w, "unsupported_grant_type", "Invalid value for \"grant_type\".")
	case form.Get("requested_token_type") != "urn:ietf:params:oauth:token-type:access_token":
		rec.Status = stsError(w, "invalid_request", "Invalid value for \"requested_token_type\".")
	case form.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:jwt":
		rec.Status = stsError(w, "invalid_request", "Invalid value for \"subject_token_type\".")
	case err != nil:
		rec.Status = stsError(w, "invalid_grant", "The subject token is not a valid JWT: "+err.Error())
	case !s.validAudience(form.Get("audience"), claims):
		rec.Status = stsError(w, "invalid_grant", fmt.Sprintf("The audience %q does not match the subject token's audience.", form.Get("audience")))
	default:
		rec.Status = http.StatusOK
		writeJSON(w, http.StatusOK, map[string]any{
			"access_token": FederatedToken(claims.Subject), "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
			"token_type": "Bearer", "expires_in": int(TokenLifetime.Seconds()),
		})
	}
}

// validAudience checks the STS audience names this cluster's identity
// namespace or a workload identity provider, and the subject token was
// issued for it: the pool for GKE, the provider itself otherwise.
func (s *Server) validAudience(audience string, c satoken.Claims) bool {
	if audience == s.IdentityNamespace() {
		return c.HasAudience(s.WorkloadIdentityPool())
	}
	return strings.HasPrefix(audience, "//iam.googleapis.com/projects/") && c.HasAudience(audience)
}

// generateAccessToken answers IAM Credentials' impersonation.
func (s *Server) generateAccessToken(w http.ResponseWriter, r *http.Request) {
	rec := Request{Method: r.Method, Path: r.URL.Path}
	defer func() { s.record(rec) }()
	email, ok := strings.CutSuffix(r.PathValue("action"), ":generateAccessToken")
	if !ok {
		rec.Status = googleError(w, http.StatusNotFound, "NOT_FOUND", "Method not found.")
		return
	}
	sub, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "+FederatedToken(""))
	if !ok {
		rec.Status = googleError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
		return
	}
	rec.Bearer = sub
	if err := json.NewDecoder(r.Body).Decode(&rec.Body); err != nil {
		rec.Status = googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload received.")
		return
	}
	if scopes, _ := rec.Body["scope"].([]any); len(scopes) == 0 {
		rec.Status = googleError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Scope required.")
		return
	}
	s.mu.Lock()
	denied := s.deny[email]
	s.mu.Unlock()
	if denied {
		rec.Status = googleError(w, http.StatusForbidden, "PERMISSION_DENIED",
			"Permission 'iam.serviceAccounts.getAccessToken' denied on resource (or it may not exist).")
		return
	}
	rec.Status = http.StatusOK
	writeJSON(w, http.StatusOK, map[string]string{
		"accessToken": ImpersonatedToken(email),
		"expireTime":  time.Now().Add(TokenLifetime).UTC().Format(time.RFC3339),
	})
}

// googleError answers as Google's JSON APIs do.
func googleError(w http.ResponseWriter, code int, status, message string) int {
	writeJSON(w, code, map[string]any{"error": map[string]any{"code": code, "message": message, "status": status}})
	return code
}

func cloneWithout(v map[string][]string, key string) map[string][]string {
	out := make(map[string][]string, len(v))
	for k, vs := range v {
		if k != key {
			out[k] = vs
		}
	}
	return out
}
