package livediff

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// directTimeout bounds connecting to the artifact's own URL, so that a
// host that is not reachable from here (the CLI and the UI run outside
// the cluster) falls back to the service proxy quickly.
const directTimeout = 5 * time.Second

// DialDirect is ArtifactFetcher's default Dial: a 5 s connect timeout.
var DialDirect = (&net.Dialer{Timeout: directTimeout}).DialContext

// ArtifactFetcher downloads a source's artifact as a caller outside the
// cluster can: from its URL when that answers, else, for a URL naming a
// cluster Service (source-controller.flux-system.svc.…), through the API
// server's service proxy with Config, the caller's identity (RBAC's
// services/proxy decides). The digest is verified and the extraction
// size-bounded by internal/source/artifact either way.
type ArtifactFetcher struct {
	// Config reaches the API server as the caller; nil: direct only.
	Config *rest.Config
	// Dial connects to the artifact's own host; DialDirect when nil
	// (tests make a host unreachable without asking DNS).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Fetch downloads a, verifies its digest and extracts it into dir.
func (f ArtifactFetcher) Fetch(ctx context.Context, a *meta.Artifact, dir string) error {
	dial := f.Dial
	if dial == nil {
		dial = DialDirect
	}
	direct := &artifact.Fetcher{Client: &http.Client{
		Timeout:   2 * time.Minute,
		Transport: &http.Transport{DialContext: dial, Proxy: http.ProxyFromEnvironment},
	}}
	err := direct.Fetch(ctx, a.URL, a.Digest, dir)
	if err == nil || !unreachable(err) || f.Config == nil {
		return err
	}
	server, _, serr := rest.DefaultServerUrlFor(f.Config)
	if serr != nil {
		return err
	}
	proxied, ok := serviceProxyURL(server, a.URL)
	if !ok {
		return err
	}
	hc, herr := rest.HTTPClientFor(f.Config)
	if herr != nil {
		return fmt.Errorf("%w; and no client for the API server's service proxy: %w", err, herr)
	}
	if perr := (&artifact.Fetcher{Client: hc}).Fetch(ctx, proxied, a.Digest, dir); perr != nil {
		return fmt.Errorf("fetching the artifact through the API server's service proxy: %w", perr)
	}
	return nil
}

// unreachable reports an error of the network (no such host, refused,
// timed out) rather than an answer of the server.
func unreachable(err error) bool {
	var dns *net.DNSError
	var op *net.OpError
	var ue *url.Error
	return errors.As(err, &dns) || errors.As(err, &op) || (errors.As(err, &ue) && ue.Timeout())
}

// serviceProxyURL rewrites an artifact URL whose host names a Service
// (NAME.NAMESPACE.svc, with or without the cluster domain and trailing
// dot) to the API server's proxy for it:
// SERVER/api/v1/namespaces/NAMESPACE/services/SCHEME:NAME:PORT/proxy/PATH.
func serviceProxyURL(server *url.URL, artifactURL string) (string, bool) {
	u, err := url.Parse(artifactURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return "", false
	}
	labels := strings.Split(strings.TrimSuffix(u.Hostname(), "."), ".")
	if len(labels) < 3 || labels[2] != "svc" || labels[0] == "" || labels[1] == "" {
		return "", false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	out := *server
	out.Path = strings.TrimSuffix(server.Path, "/") + "/api/v1/namespaces/" + labels[1] + "/services/" +
		u.Scheme + ":" + labels[0] + ":" + port + "/proxy" + u.Path
	out.RawPath = ""
	out.RawQuery = u.RawQuery
	return out.String(), true
}
