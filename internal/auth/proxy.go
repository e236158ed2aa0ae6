package auth

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
)

// WithProxy returns s for an object whose spec.proxySecretRef names proxy:
// the cloud calls of its exchanges (STS, ECR, Entra ID, ACR's exchange,
// Google STS and IAM Credentials) go through it, as Flux's do, and not
// through the environment's HTTPS_PROXY. The copy shares s's cache: a
// token does not depend on the route it came by. A nil proxy returns s.
func (s *Settings) WithProxy(proxy *url.URL) *Settings {
	if proxy == nil {
		return s
	}
	var c Settings
	if s != nil {
		c = *s
	}
	c.Proxy = proxy
	return &c
}

// HTTPClient is base (nil: a client on http.DefaultTransport) sending its
// requests through s.Proxy; base itself when s has no proxy. A base whose
// transport is not an *http.Transport is replaced by a clone of
// http.DefaultTransport, as a proxy needs one. Node-local endpoints (the
// instance metadata services, EKS Pod Identity's agent) stay direct: the
// SDKs reach them with the same client, and no proxy can.
func (s *Settings) HTTPClient(base *http.Client) *http.Client {
	if s == nil || s.Proxy == nil {
		return base
	}
	var t *http.Transport
	if base != nil {
		if bt, ok := base.Transport.(*http.Transport); ok {
			t = bt.Clone()
		}
	}
	if t == nil {
		t = http.DefaultTransport.(*http.Transport).Clone()
	}
	s.ProxyTransport(t)
	c := &http.Client{Transport: t}
	if base != nil {
		c.Timeout, c.CheckRedirect, c.Jar = base.Timeout, base.CheckRedirect, base.Jar
	}
	return c
}

// ProxyFunc is an http.Transport's Proxy for s (see HTTPClient), for
// clients that build their own transport; nil when s has no proxy.
func (s *Settings) ProxyFunc() func(*http.Request) (*url.URL, error) {
	if s == nil || s.Proxy == nil {
		return nil
	}
	proxy := s.Proxy
	return func(r *http.Request) (*url.URL, error) {
		if nodeLocal(r.URL.Hostname()) {
			return nil, nil
		}
		return proxy, nil
	}
}

// ProxyTransport makes t send its requests through s.Proxy, as
// HTTPClient's clients do, for SDKs that build their own transport; it
// leaves t alone when s has no proxy. A proxy that refuses a CONNECT
// tunnel fails the request with a ProxyRefusedError.
func (s *Settings) ProxyTransport(t *http.Transport) {
	if s == nil || s.Proxy == nil {
		return
	}
	t.Proxy = s.ProxyFunc()
	t.OnProxyConnectResponse = refusedTunnel
}

// ProxyRefusedError is a proxy's answer other than 200 to a CONNECT: Go's
// transport would give only the status text ("Proxy Authentication
// Required"), which loses the code and the host. It never holds the
// proxy's address, which may carry its password.
type ProxyRefusedError struct {
	// Host is the host:port the tunnel was asked for.
	Host string
	// Status is the proxy's status line, "407 Proxy Authentication Required".
	Status string
}

func (e *ProxyRefusedError) Error() string {
	return fmt.Sprintf("the proxy refused to tunnel to %s: %s", e.Host, e.Status)
}

// NonRetriable tells Azure's SDK (azcore's retry policy) not to retry: a
// proxy's refusal, a 407 most often, does not pass with time, and the
// retries would spend the caller's deadline and hide the refusal behind
// "context deadline exceeded".
func (*ProxyRefusedError) NonRetriable() {}

func refusedTunnel(_ context.Context, _ *url.URL, req *http.Request, resp *http.Response) error {
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	return &ProxyRefusedError{Host: req.Host, Status: resp.Status}
}

// ec2MetadataIPv6 is the EC2 instance metadata service's IPv6 address.
var ec2MetadataIPv6 = net.ParseIP("fd00:ec2::254")

// nodeLocal reports whether host is a metadata or credential endpoint on
// the node: link-local addresses (169.254.169.254, EKS Pod Identity's
// 169.254.170.23), EC2's IPv6 metadata address, GCE's metadata name.
func nodeLocal(host string) bool {
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLinkLocalUnicast() || ip.Equal(ec2MetadataIPv6)
	}
	return host == "metadata.google.internal"
}
