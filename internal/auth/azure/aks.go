package azure

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/weir-gitops/weir/internal/auth"
)

// ScopeAKS is the scope of the Entra tokens an AKS cluster with Microsoft
// Entra ID integration accepts as bearer tokens (the AKS AAD server
// application).
const ScopeAKS = "6dae42f8-4368-4678-94ff-3960e28e3630/.default"

// ScopeResourceManager is the scope of the token that reads the cluster
// resource: Azure Resource Manager's audience and /.default, as Flux
// builds it from the public cloud's configuration.
const ScopeResourceManager = "https://management.core.windows.net//.default"

// DefaultResourceManagerURL is Azure Resource Manager's base URL.
const DefaultResourceManagerURL = "https://management.azure.com"

// ManagedClustersAPIVersion is the api-version of the managedClusters
// calls, the one Azure's REST reference documents for them.
const ManagedClustersAPIVersion = "2025-10-01"

const clusterPattern = `(?i)^/subscriptions/([^/]{36})/resourceGroups/([^/]{1,200})/providers/Microsoft\.ContainerService/managedClusters/([^/]{1,200})$`

// Compiled on first use: bounded repetitions compile to a large program
// that every process would otherwise build at start (design 0038).
var clusterRegexp = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(clusterPattern) })

// ParseCluster checks an AKS cluster's ARM resource ID, with Flux's
// message.
func ParseCluster(id string) error {
	if !clusterRegexp().MatchString(id) {
		return fmt.Errorf("invalid AKS cluster ID: '%s'. must match %s", id, clusterPattern)
	}
	return nil
}

// Cluster is one address of an AKS API server and its CA.
type Cluster struct {
	// Endpoint is the API server's https URL.
	Endpoint string
	// CA is the PEM of its certificate authority.
	CA []byte
}

// DescribeCluster reads the AKS cluster resource (ARM managedClusters
// GET), refuses one without Microsoft Entra ID integration (no
// aadProfile), and lists its user kubeconfigs (listClusterUserCredential),
// one per address (public, private FQDN); it returns their servers and
// CAs in ARM's order. Both calls carry id's Azure Resource Manager token.
// The answer is cached under the identity and the cluster for the
// cache's maximum duration.
func (p *Provider) DescribeCluster(ctx context.Context, id auth.Identity, s *auth.Settings, resourceID string) ([]Cluster, error) {
	if err := ParseCluster(resourceID); err != nil {
		return nil, err
	}
	tok, err := p.AccessToken(ctx, id, s, ScopeResourceManager)
	if err != nil {
		return nil, fmt.Errorf("failed to get access token for describing AKS cluster: %w", err)
	}
	key := strings.Join([]string{ProviderName, id.String(), "aks-describe", "cluster=" + strings.ToLower(resourceID), "arm=" + p.armURL()}, "|")
	t, err := cacheOf(s).Get(ctx, key, func(ctx context.Context) (auth.Token, error) {
		clusters, err := p.describe(ctx, tok.Value, resourceID)
		if err != nil {
			return auth.Token{}, err
		}
		b, err := json.Marshal(clusters)
		if err != nil {
			return auth.Token{}, err
		}
		return auth.Token{Value: string(b)}, nil
	})
	if err != nil {
		return nil, err
	}
	var clusters []Cluster
	if err := json.Unmarshal([]byte(t.Value), &clusters); err != nil {
		return nil, err
	}
	return clusters, nil
}

func (p *Provider) describe(ctx context.Context, armToken, resourceID string) ([]Cluster, error) {
	var mc struct {
		Properties struct {
			AADProfile *json.RawMessage `json:"aadProfile"`
		} `json:"properties"`
	}
	if err := p.arm(ctx, http.MethodGet, resourceID, armToken, &mc); err != nil {
		return nil, fmt.Errorf("failed to describe AKS cluster: ARM managedClusters GET: %w", err)
	}
	if mc.Properties.AADProfile == nil || string(*mc.Properties.AADProfile) == "null" {
		return nil, fmt.Errorf("AKS cluster %s does not have Microsoft Entra ID integration enabled. "+
			"See docs for enabling: https://learn.microsoft.com/en-us/azure/aks/enable-authentication-microsoft-entra-id", resourceID)
	}
	var creds struct {
		Kubeconfigs []struct {
			Name  string `json:"name"`
			Value []byte `json:"value"`
		} `json:"kubeconfigs"`
	}
	if err := p.arm(ctx, http.MethodPost, resourceID+"/listClusterUserCredential", armToken, &creds); err != nil {
		return nil, fmt.Errorf("failed to list AKS cluster user credentials: ARM listClusterUserCredential: %w", err)
	}
	clusters := make([]Cluster, 0, len(creds.Kubeconfigs))
	for i, kc := range creds.Kubeconfigs {
		conf, err := clientcmd.RESTConfigFromKubeConfig(kc.Value)
		if err != nil {
			return nil, fmt.Errorf("failed to parse kubeconfig[%d]: %w", i, err)
		}
		clusters = append(clusters, Cluster{Endpoint: conf.Host, CA: conf.CAData})
	}
	if len(clusters) == 0 {
		return nil, fmt.Errorf("no kubeconfig found for AKS cluster %s", resourceID)
	}
	return clusters, nil
}

// arm makes one Azure Resource Manager call and decodes its JSON answer;
// an error answer's code and message (never the token) are the error.
func (p *Provider) arm(ctx context.Context, method, path, token string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, p.armURL()+path+"?api-version="+ManagedClustersAPIVersion, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	hc := p.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		return fmt.Errorf("%s %s: HTTP %d %s: %s", method, req.URL.Path, resp.StatusCode, e.Error.Code, e.Error.Message)
	}
	return json.Unmarshal(body, out)
}

func (p *Provider) armURL() string {
	if p.ResourceManagerURL != "" {
		return strings.TrimSuffix(p.ResourceManagerURL, "/")
	}
	return DefaultResourceManagerURL
}
