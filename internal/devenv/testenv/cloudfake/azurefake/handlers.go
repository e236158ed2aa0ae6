package azurefake

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/satoken"
)

// instanceDiscovery answers MSAL's question about an authority host it
// does not know: where the tenant's OpenID configuration is.
func (s *Server) instanceDiscovery(w http.ResponseWriter, r *http.Request) {
	rec := Request{Method: r.Method, Host: r.Host, Path: r.URL.Path, Query: r.URL.Query()}
	defer func() { s.record(rec) }()
	u, err := url.Parse(r.URL.Query().Get("authorization_endpoint"))
	tenant, _, ok := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	if err != nil || !ok || u.Host == "" {
		rec.Status = entraError(w, "invalid_instance", 50049, "Unknown or invalid instance.")
		return
	}
	rec.Status = writeJSON(w, http.StatusOK, map[string]any{
		"api-version":               "1.1",
		"tenant_discovery_endpoint": "https://" + u.Host + "/" + tenant + "/v2.0/.well-known/openid-configuration",
		"metadata":                  []map[string]any{{"preferred_network": u.Host, "preferred_cache": u.Host, "aliases": []string{u.Host}}},
	})
}

func (s *Server) openIDConfiguration(w http.ResponseWriter, r *http.Request) {
	s.record(Request{Method: r.Method, Host: r.Host, Path: r.URL.Path, Status: http.StatusOK})
	base := "https://" + r.Host + "/" + r.PathValue("tenant")
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                   base + "/v2.0",
		"token_endpoint":           base + "/oauth2/v2.0/token",
		"authorization_endpoint":   base + "/oauth2/v2.0/authorize",
		"jwks_uri":                 base + "/discovery/v2.0/keys",
		"response_types_supported": []string{"code", "id_token", "code id_token", "id_token token"},
	})
}

// token answers the client credentials grant, checking what Entra checks:
// with a federated client assertion (a ServiceAccount token), or with a
// registered client secret or certificate (clientcreds.go).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	rec := Request{Method: r.Method, Host: r.Host, Path: r.URL.Path}
	defer func() { s.record(rec) }()
	if err := r.ParseForm(); err != nil {
		rec.Status = entraError(w, "invalid_request", 900144, err.Error())
		return
	}
	form := r.PostForm
	rec.Form = without(without(form, "client_assertion"), "client_secret")
	if s.clientCredential(w, r, form, &rec) {
		return
	}
	rec.ClientAuth = AuthFederated
	claims, err := satoken.Parse(form.Get("client_assertion"))
	if err == nil {
		rec.Assertion = &claims
	}
	scope := defaultScope(form.Get("scope"))
	switch {
	case form.Get("grant_type") != "client_credentials":
		rec.Status = entraError(w, "unsupported_grant_type", 70003, "The app requested an unsupported grant type.")
	case form.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
		rec.Status = entraError(w, "invalid_request", 90002, "Invalid client assertion type.")
	case err != nil:
		rec.Status = entraError(w, "invalid_client", 50027, "Invalid JWT token: "+err.Error())
	case !claims.HasAudience(TokenExchangeAudience):
		rec.Status = entraError(w, "invalid_client", 700212,
			"No matching federated identity record found for presented assertion audience '"+strings.Join(claims.Audience, ",")+"'.")
	default:
		rec.Status = s.issue(w, form.Get("client_id"), scope)
	}
}

// managedIdentity answers the App Service managed identity endpoint.
func (s *Server) managedIdentity(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	rec := Request{Method: r.Method, Host: r.Host, Path: r.URL.Path, Query: q}
	defer func() { s.record(rec) }()
	if r.Header.Get("X-IDENTITY-HEADER") != IdentityHeader {
		rec.Status = writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "unauthorized", "error_description": "X-IDENTITY-HEADER is missing or wrong"})
		return
	}
	if q.Get("api-version") != "2019-08-01" || q.Get("resource") == "" {
		rec.Status = writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": "api-version 2019-08-01 and resource are required"})
		return
	}
	client := q.Get("client_id")
	if client == "" {
		client = ManagedIdentityClient
	}
	rec.Status = writeJSON(w, http.StatusOK, map[string]string{
		"access_token": AccessToken(client, q.Get("resource")+"/.default"),
		"expires_on":   strconv.FormatInt(time.Now().Add(TokenLifetime).Unix(), 10),
		"resource":     q.Get("resource"), "token_type": "Bearer",
	})
}

// exchange answers ACR's POST /oauth2/exchange.
func (s *Server) exchange(w http.ResponseWriter, r *http.Request) {
	rec := Request{Method: r.Method, Host: r.Host, Path: r.URL.Path}
	defer func() { s.record(rec) }()
	if err := r.ParseForm(); err != nil {
		rec.Status = acrError(w, http.StatusBadRequest, err.Error())
		return
	}
	form := r.PostForm
	rec.Form = without(form, "access_token")
	client, scope, ok := strings.Cut(strings.TrimPrefix(form.Get("access_token"), "entra."), ".")
	if ok && strings.HasPrefix(form.Get("access_token"), "entra.") {
		rec.AccessToken = client + " for " + scope
	}
	host := strings.Split(r.Host, ":")[0]
	switch {
	case form.Get("grant_type") != "access_token":
		rec.Status = acrError(w, http.StatusBadRequest, "grant_type must be access_token")
	case form.Get("service") != host:
		rec.Status = acrError(w, http.StatusBadRequest, fmt.Sprintf("service %q is not this registry", form.Get("service")))
	case rec.AccessToken == "" || !strings.HasPrefix(scope, "https://management."):
		rec.Status = acrError(w, http.StatusUnauthorized, "the access token is not an Azure Resource Manager token")
	default:
		rec.Status = writeJSON(w, http.StatusOK, map[string]string{"refresh_token": s.RefreshToken(client, host)})
	}
}

// defaultScope is the scope ending in /.default among the space-separated
// scopes MSAL sends (it adds openid, profile, offline_access).
func defaultScope(scopes string) string {
	for _, sc := range strings.Fields(scopes) {
		if strings.HasSuffix(sc, "/.default") {
			return sc
		}
	}
	return ""
}

// entraError answers as Entra does a request it refuses: 400 and an OAuth
// error with its AADSTS code.
func entraError(w http.ResponseWriter, code string, aadsts int, description string) int {
	return entraStatus(w, http.StatusBadRequest, code, aadsts, description)
}

func entraStatus(w http.ResponseWriter, status int, code string, aadsts int, description string) int {
	return writeJSON(w, status, map[string]any{
		"error": code, "error_description": fmt.Sprintf("AADSTS%d: %s", aadsts, description), "error_codes": []int{aadsts},
	})
}

func acrError(w http.ResponseWriter, status int, message string) int {
	return writeJSON(w, status, map[string]any{"errors": []map[string]string{{"code": "UNAUTHORIZED", "message": message}}})
}

func without(v url.Values, key string) url.Values {
	out := url.Values{}
	for k, vs := range v {
		if k != key {
			out[k] = vs
		}
	}
	return out
}
