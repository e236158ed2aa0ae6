package release

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// sharedCapabilities keeps, for one cluster and identity, what templates
// see as .Capabilities: the server's version and the API versions it
// serves. Helm reads them afresh for every install and upgrade, throwing
// the shared discovery cache away each time (three discovery requests
// and the parse of the whole aggregated document per action). Here the
// answer is kept and reused while the server says it still holds: its
// /version is the same and its aggregated /apis document answers the
// kept ETag with 304 Not Modified. A CRD or APIService added or removed
// changes that document, so a template never sees a stale set.
type sharedCapabilities struct {
	// probe sends the conditional GET of /apis; url is its address.
	probe *http.Client
	url   string
	plain *discovery.DiscoveryClient

	mu      sync.Mutex
	caps    *common.Capabilities
	etag    string
	version string
	// noETag is set once the server answered /apis without an ETag:
	// then nothing can tell a kept answer is current, and every call
	// reads discovery afresh as Helm does.
	noETag bool
}

// newSharedCapabilities prepares the probe for cfg's cluster.
func newSharedCapabilities(cfg *rest.Config) (*sharedCapabilities, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building HTTP client for discovery: %w", err)
	}
	plain, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("building discovery client: %w", err)
	}
	return &sharedCapabilities{
		probe: httpClient,
		url:   plain.RESTClient().Get().AbsPath("/apis").URL().String(),
		plain: plain,
	}, nil
}

// get returns the cluster's capabilities, read from dc (the shared,
// memory-cached discovery) only when the kept answer may be stale. The
// caller receives its own copy.
func (s *sharedCapabilities) get(ctx context.Context, dc discovery.CachedDiscoveryInterface) (*common.Capabilities, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	version, err := s.plain.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("could not get server version from Kubernetes: %w", err)
	}
	etag := ""
	if !s.noETag {
		var unchanged bool
		etag, unchanged, err = s.ask(ctx)
		if err != nil {
			return nil, err
		}
		if unchanged && s.caps != nil && version.GitVersion == s.version {
			return s.caps.Copy(), nil
		}
		s.noETag = etag == ""
	}
	dc.Invalidate()
	versions, err := action.GetVersionSet(dc)
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, err
	}
	s.caps = &common.Capabilities{
		APIVersions: versions,
		KubeVersion: common.KubeVersion{Version: version.GitVersion, Major: version.Major, Minor: version.Minor},
		HelmVersion: common.DefaultCapabilities.HelmVersion,
	}
	s.etag, s.version = etag, version.GitVersion
	return s.caps.Copy(), nil
}

// ask sends GET /apis for the aggregated discovery document with the kept
// ETag. unchanged is true when the server answered 304; otherwise etag is
// the document's current ETag ("" when the server sends none).
func (s *sharedCapabilities) ask(ctx context.Context) (etag string, unchanged bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return "", false, fmt.Errorf("building discovery request: %w", err)
	}
	req.Header.Set("Accept", discovery.AcceptV2)
	if s.etag != "" {
		req.Header.Set("If-None-Match", s.etag)
	}
	resp, err := s.probe.Do(req)
	if err != nil {
		return "", false, fmt.Errorf("could not get apiVersions from Kubernetes: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	switch resp.StatusCode {
	case http.StatusNotModified:
		return s.etag, true, nil
	case http.StatusOK:
		return resp.Header.Get("ETag"), false, nil
	default:
		return "", false, fmt.Errorf("could not get apiVersions from Kubernetes: GET /apis: %s", resp.Status)
	}
}

// shareCapabilities gives the next install or upgrade the capabilities
// its shared factory keeps, so that Helm does not read discovery itself.
// A chart that carries CRDs is left to Helm: its own CRDs are created
// during the action and must be in the set its templates see. When the
// kept answer cannot be had, Helm asks, and reports, as it always does.
func (c *Client) shareCapabilities(ctx context.Context, chrt *chartv2.Chart) {
	if c.factory == nil || c.factory.caps == nil || len(chrt.CRDObjects()) > 0 {
		return
	}
	dc, err := c.factory.getter.ToDiscoveryClient()
	if err != nil {
		return
	}
	if caps, err := c.factory.caps.get(ctx, dc); err == nil {
		c.cfg.Capabilities = caps
	}
}
