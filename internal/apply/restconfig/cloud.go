package restconfig

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/weir-gitops/weir/internal/auth"
	"github.com/weir-gitops/weir/internal/auth/aws"
	"github.com/weir-gitops/weir/internal/auth/azure"
	"github.com/weir-gitops/weir/internal/auth/gcp"
)

// clouds names the managed Kubernetes each cloud provider reaches.
var clouds = map[string]string{ProviderAWS: "EKS", ProviderAzure: "AKS", ProviderGCP: "GKE"}

// checkCluster reads the cluster key of a cloud provider: EKS always needs
// it (the region and the name are in the token); GKE and AKS only to look
// up what address or ca.crt leave out. A malformed one is refused with
// the cloud's message.
func (a *clusterAccess) checkCluster(cluster string) error {
	a.cluster = cluster
	if cluster == "" {
		if a.provider == ProviderAWS {
			return refused("KubeConfig ConfigMap '%s': key '%s' (the EKS cluster ARN) is required for provider 'aws'", a.key, KeyCluster)
		}
		if a.address == "" || a.ca == nil {
			return refused("KubeConfig ConfigMap '%s': key '%s' is required for provider '%s' when '%s' or '%s' is not set",
				a.key, KeyCluster, a.provider, KeyAddress, KeyCA)
		}
		return nil
	}
	var err error
	switch a.provider {
	case ProviderAWS:
		_, _, err = aws.ParseCluster(cluster)
	case ProviderGCP:
		err = gcp.ParseCluster(cluster)
	case ProviderAzure:
		err = azure.ParseCluster(cluster)
	}
	if err != nil {
		return refused("KubeConfig ConfigMap '%s': %v", a.key, err)
	}
	return nil
}

// cloudTokens are the bearer tokens the cloud's managed Kubernetes
// accepts, each through the identity's auth.Cache: EKS's presigned STS
// GetCallerIdentity, a GCP access token, an Entra token for AKS's
// scope.
func (r *Resolver) cloudTokens(a *clusterAccess, id auth.Identity) *cloudTokenSource {
	s := r.KubeConfigIdentity
	src := &cloudTokenSource{key: a.key}
	switch a.provider {
	case ProviderAWS:
		src.fetch = func(ctx context.Context) (auth.Token, error) { return aws.ClusterToken(ctx, s, id, a.cluster) }
	case ProviderGCP:
		src.fetch = func(ctx context.Context) (auth.Token, error) { return r.gcp().AccessToken(ctx, id, s) }
	case ProviderAzure:
		src.fetch = func(ctx context.Context) (auth.Token, error) {
			return r.azure().AccessToken(ctx, id, s, azure.ScopeAKS)
		}
	}
	return src
}

type cloudTokenSource struct {
	key   types.NamespacedName
	fetch func(context.Context) (auth.Token, error)
}

func (c *cloudTokenSource) get(ctx context.Context) (auth.Token, error) {
	tok, err := c.fetch(ctx)
	if err != nil {
		return auth.Token{}, fmt.Errorf("KubeConfig ConfigMap '%s': failed to get access token for cluster: %w", c.key, err)
	}
	return tok, nil
}

func (r *Resolver) gcp() *gcp.Provider {
	if r.GCP != nil {
		return r.GCP
	}
	return gcp.Default
}

func (r *Resolver) azure() *azure.Provider {
	if r.Azure != nil {
		return r.Azure
	}
	return azure.Default
}

// endpoint is one address of a cluster, as its cloud describes it.
type endpoint struct {
	host string
	ca   []byte
}

// cloudEndpoint is the API server's URL and CA: the ConfigMap's when it
// gives both (no cloud call), otherwise the cluster resource's (EKS
// DescribeCluster, GKE clusters.get, AKS managedClusters and
// listClusterUserCredential), where an address the ConfigMap gives must
// be one of the cluster's, and a ca.crt it gives wins.
func (r *Resolver) cloudEndpoint(ctx context.Context, a *clusterAccess, id auth.Identity) (string, []byte, error) {
	if a.address != "" && a.ca != nil {
		return a.host, a.ca, nil
	}
	var found []endpoint
	switch a.provider {
	case ProviderAWS:
		c, err := aws.DescribeCluster(ctx, r.KubeConfigIdentity, id, a.cluster)
		if err != nil {
			return "", nil, err
		}
		found = append(found, endpoint{c.Endpoint, c.CA})
	case ProviderGCP:
		c, err := r.gcp().DescribeCluster(ctx, id, r.KubeConfigIdentity, a.cluster)
		if err != nil {
			return "", nil, err
		}
		found = append(found, endpoint{c.Endpoint, c.CA})
	case ProviderAzure:
		cs, err := r.azure().DescribeCluster(ctx, id, r.KubeConfigIdentity, a.cluster)
		if err != nil {
			return "", nil, err
		}
		for _, c := range cs {
			found = append(found, endpoint{c.Endpoint, c.CA})
		}
	}
	e, err := pick(a, found)
	if err != nil {
		return "", nil, err
	}
	host, err := clusterHost(e.host)
	if err != nil {
		return "", nil, fmt.Errorf("%s endpoint '%s': %w", clouds[a.provider], e.host, err)
	}
	if a.ca != nil {
		return host, a.ca, nil
	}
	return host, e.ca, nil
}

// pick is the first address, or the one the ConfigMap's address names
// (compared as Flux does: https, lower-case host, port 443 when none).
func pick(a *clusterAccess, found []endpoint) (endpoint, error) {
	if len(found) == 0 {
		return endpoint{}, fmt.Errorf("no address found for %s cluster %s", clouds[a.provider], a.cluster)
	}
	if a.address == "" {
		return found[0], nil
	}
	want, err := canonicalAddress(a.address)
	if err != nil {
		return endpoint{}, fmt.Errorf("failed to parse specified cluster address '%s': %w", a.address, err)
	}
	var addresses []string
	for _, e := range found {
		if got, err := canonicalAddress(e.host); err == nil && got == want {
			return e, nil
		}
		addresses = append(addresses, "'"+e.host+"'")
	}
	if a.provider == ProviderAzure {
		return endpoint{}, fmt.Errorf("AKS cluster %s does not match specified address '%s'. cluster addresses: [%s]",
			a.cluster, a.address, strings.Join(addresses, ", "))
	}
	return endpoint{}, fmt.Errorf("%s endpoint '%s' does not match specified address: '%s'", clouds[a.provider], found[0].host, a.address)
}

// canonicalAddress is https://<lower-case host>:<port>.
func canonicalAddress(address string) (string, error) {
	u, err := parseHTTPS(address)
	if err != nil {
		return "", err
	}
	host := u.Host
	if u.Port() == "" {
		host += ":443"
	}
	return "https://" + strings.ToLower(host), nil
}
