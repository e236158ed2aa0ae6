package gcp

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/oauth2"
	container "google.golang.org/api/container/v1"
	"google.golang.org/api/option"

	"github.com/weir-gitops/weir/internal/auth"
)

// DefaultContainerURL is the base of the GKE API.
const DefaultContainerURL = "https://container.googleapis.com/"

const clusterPattern = `^projects/[^/]{1,200}/locations/[^/]{1,200}/clusters/[^/]{1,200}$`

// Compiled on first use: bounded repetitions compile to a large program
// that every process would otherwise build at start (design 0038).
var clusterRegexp = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(clusterPattern) })

// ParseCluster checks a GKE cluster's resource name, with Flux's message.
func ParseCluster(name string) error {
	if !clusterRegexp().MatchString(name) {
		return fmt.Errorf("invalid GKE cluster ID: '%s'. must match %s", name, clusterPattern)
	}
	return nil
}

// Cluster is a GKE API server, as clusters.get describes it.
type Cluster struct {
	// Endpoint is the API server's https URL.
	Endpoint string
	// CA is the PEM of its certificate authority.
	CA []byte
}

// DescribeCluster calls the GKE API's projects.locations.clusters.get for
// the cluster name (projects/P/locations/L/clusters/C) with id's access
// token, for its endpoint (an IP, made an https URL) and CA. The answer
// is cached under the identity and the cluster for the cache's maximum
// duration.
func (p *Provider) DescribeCluster(ctx context.Context, id auth.Identity, s *auth.Settings, name string) (Cluster, error) {
	if err := ParseCluster(name); err != nil {
		return Cluster{}, err
	}
	tok, err := p.AccessToken(ctx, id, s)
	if err != nil {
		return Cluster{}, fmt.Errorf("failed to get access token for describing GKE cluster: %w", err)
	}
	key := strings.Join([]string{ProviderName, id.String(), "gke-describe", "cluster=" + name, "api=" + p.containerURL()}, "|")
	t, err := cacheOf(s).Get(ctx, key, func(ctx context.Context) (auth.Token, error) {
		base := http.DefaultTransport
		if p.HTTPClient != nil && p.HTTPClient.Transport != nil {
			base = p.HTTPClient.Transport
		}
		hc := &http.Client{Transport: &oauth2.Transport{Base: base, Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok.Value})}}
		svc, err := container.NewService(ctx, option.WithHTTPClient(hc), option.WithEndpoint(p.containerURL()))
		if err != nil {
			return auth.Token{}, fmt.Errorf("failed to create client for describing GKE cluster: %w", err)
		}
		c, err := svc.Projects.Locations.Clusters.Get(name).Context(ctx).Do()
		if err != nil {
			return auth.Token{}, fmt.Errorf("failed to describe GKE cluster '%s': %w", name, err)
		}
		if c.Endpoint == "" || c.MasterAuth == nil {
			return auth.Token{}, fmt.Errorf("failed to describe GKE cluster '%s': the answer has no endpoint or master auth", name)
		}
		ca, err := base64.StdEncoding.DecodeString(c.MasterAuth.ClusterCaCertificate)
		if err != nil {
			return auth.Token{}, fmt.Errorf("failed to decode GKE CA certificate: %w", err)
		}
		endpoint := c.Endpoint
		if !strings.Contains(endpoint, "://") {
			endpoint = "https://" + endpoint
		}
		return auth.Token{Username: endpoint, Value: string(ca)}, nil
	})
	if err != nil {
		return Cluster{}, err
	}
	return Cluster{Endpoint: t.Username, CA: []byte(t.Value)}, nil
}

func (p *Provider) containerURL() string {
	if p.ContainerURL != "" {
		return strings.TrimSuffix(p.ContainerURL, "/") + "/"
	}
	return DefaultContainerURL
}
