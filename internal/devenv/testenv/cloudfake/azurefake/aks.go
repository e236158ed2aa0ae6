package azurefake

import (
	"fmt"
	"net/http"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// AKSCluster is a managed cluster the fake's Azure Resource Manager
// knows.
type AKSCluster struct {
	// Servers are its API server URLs, one user kubeconfig each, in
	// order (public FQDN, private FQDN).
	Servers []string
	// CA is the PEM of their certificate authority.
	CA []byte
	// LocalAccounts leaves Microsoft Entra ID integration off (no
	// aadProfile).
	LocalAccounts bool
}

// AddCluster makes ARM know the cluster of resource ID id
// (/subscriptions/S/resourceGroups/G/providers/Microsoft.ContainerService/managedClusters/N).
func (s *Server) AddCluster(id string, c AKSCluster) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clusters == nil {
		s.clusters = map[string]AKSCluster{}
	}
	s.clusters[strings.ToLower(id)] = c
}

// TokenScope splits one of the fake's Entra access tokens into its client
// and scope; ok is false for a token the fake did not issue.
func TokenScope(token string) (client, scope string, ok bool) {
	rest, ok := strings.CutPrefix(token, "entra.")
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, ".")
}

// arm answers managedClusters GET and POST …/listClusterUserCredential
// for an Azure Resource Manager token.
func (s *Server) arm(w http.ResponseWriter, r *http.Request) {
	rec := Request{Method: r.Method, Host: r.Host, Path: r.URL.Path, Query: r.URL.Query()}
	defer func() { s.record(rec) }()
	client, scope, ok := TokenScope(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	if ok {
		rec.AccessToken = client + " for " + scope
	}
	id, list := strings.CutSuffix(r.URL.Path, "/listClusterUserCredential")
	s.mu.Lock()
	c, known := s.clusters[strings.ToLower(id)]
	s.mu.Unlock()
	switch {
	case !ok || !strings.HasPrefix(scope, "https://management."):
		rec.Status = armError(w, http.StatusUnauthorized, "InvalidAuthenticationToken", "The access token is invalid.")
	case r.URL.Query().Get("api-version") == "":
		rec.Status = armError(w, http.StatusBadRequest, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required for all requests.")
	case !known:
		rec.Status = armError(w, http.StatusNotFound, "ResourceNotFound", "The Resource '"+id+"' was not found.")
	case list && r.Method == http.MethodPost:
		rec.Status = s.userCredentials(w, c)
	case !list && r.Method == http.MethodGet:
		props := map[string]any{"provisioningState": "Succeeded"}
		if !c.LocalAccounts {
			props["aadProfile"] = map[string]any{"managed": true, "enableAzureRBAC": true}
		}
		rec.Status = writeJSON(w, http.StatusOK, map[string]any{"id": id, "properties": props})
	default:
		rec.Status = armError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", r.Method+" is not allowed here.")
	}
}

func (s *Server) userCredentials(w http.ResponseWriter, c AKSCluster) int {
	var kcs []map[string]any
	for i, server := range c.Servers {
		kc := clientcmdapi.NewConfig()
		kc.Clusters["aks"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: c.CA}
		kc.AuthInfos["clusterUser"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1beta1", Command: "kubelogin",
			Args: []string{"get-token", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630"}, InteractiveMode: clientcmdapi.IfAvailableExecInteractiveMode,
		}}
		kc.Contexts["aks"] = &clientcmdapi.Context{Cluster: "aks", AuthInfo: "clusterUser"}
		kc.CurrentContext = "aks"
		b, err := clientcmd.Write(*kc)
		if err != nil {
			return armError(w, http.StatusInternalServerError, "InternalServerError", err.Error())
		}
		kcs = append(kcs, map[string]any{"name": fmt.Sprintf("clusterUser-%d", i), "value": b})
	}
	return writeJSON(w, http.StatusOK, map[string]any{"kubeconfigs": kcs})
}

func armError(w http.ResponseWriter, status int, code, message string) int {
	return writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": message}})
}
