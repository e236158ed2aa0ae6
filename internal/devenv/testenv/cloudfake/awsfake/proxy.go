package awsfake

import (
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// ProxyOptions configure a Proxy.
type ProxyOptions struct {
	// Registry is the URL of the registry that plain HTTP requests for any
	// host but 127.0.0.1 go to: a cloud registry's name (ECR's, ACR's,
	// Artifact Registry's) then reaches a local registry.
	Registry string
	// Tunnel, when set, is the address (host:port) every CONNECT is
	// tunnelled to: a TLS fake serving the clouds' named hosts
	// (azurefake). Without it CONNECT is refused, so that clients of an
	// insecure registry fall back to plain HTTP.
	Tunnel string
	// Username and Password, when Username is set, are the basic-auth
	// pair every request must present in Proxy-Authorization; others get
	// 407.
	Username, Password string
}

// Proxy is an HTTP forward proxy on 127.0.0.1 for objects' and tests'
// spec.proxySecretRef. Plain HTTP requests to a 127.0.0.1 address (the
// fakes) pass through to it; others go to ProxyOptions.Registry. It
// records every request it received.
type Proxy struct {
	// URL is the proxy's address, what a proxy Secret's address takes.
	URL string

	opts ProxyOptions
	mu   sync.Mutex
	seen []string
}

// NewProxy starts a Proxy and stops it when the test ends.
func NewProxy(t testing.TB, opts ProxyOptions) *Proxy {
	t.Helper()
	registry, err := url.Parse(opts.Registry)
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{opts: opts}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		if strings.HasPrefix(r.In.Host, "127.0.0.1:") {
			r.Out.URL.Scheme, r.Out.URL.Host = "http", r.In.Host
			return
		}
		r.SetURL(registry)
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		what := r.Host
		switch {
		case r.Method == http.MethodConnect:
			what = "CONNECT " + r.Host
		case r.Header.Get("X-Amz-Target") != "":
			what += " " + r.Header.Get("X-Amz-Target")
		}
		if !p.authorized(r) {
			p.record(what + " (refused: proxy authentication)")
			w.Header().Set("Proxy-Authenticate", `Basic realm="weir-test-proxy"`)
			http.Error(w, "proxy authentication required", http.StatusProxyAuthRequired)
			return
		}
		p.record(what)
		switch {
		case r.Method != http.MethodConnect:
			rp.ServeHTTP(w, r)
		case opts.Tunnel == "":
			http.Error(w, "this proxy tunnels nothing", http.StatusMethodNotAllowed)
		default:
			tunnel(w, opts.Tunnel)
		}
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// RegistryProxy is a Proxy without tunnel or authentication sending
// other hosts' plain HTTP to the registry at target: it returns the
// proxy's URL and the hosts clients asked for.
func RegistryProxy(t testing.TB, target string) (proxyURL string, hosts func() []string) {
	t.Helper()
	p := NewProxy(t, ProxyOptions{Registry: target})
	return p.URL, p.Seen
}

// Seen is what went through the proxy, in order: the host of each plain
// HTTP request (with its X-Amz-Target when it has one: STS's calls have
// none, ECR's do), "CONNECT host:port" for tunnels, and "(refused: …)"
// after those it refused.
func (p *Proxy) Seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

func (p *Proxy) record(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, s)
}

func (p *Proxy) authorized(r *http.Request) bool {
	if p.opts.Username == "" {
		return true
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(p.opts.Username+":"+p.opts.Password))
	return r.Header.Get("Proxy-Authorization") == want
}

// tunnel answers a CONNECT with a raw connection to addr.
func tunnel(w http.ResponseWriter, addr string) {
	upstream, err := net.Dial("tcp", addr)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = upstream.Close()
		http.Error(w, "cannot tunnel", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		_ = upstream.Close()
		return
	}
	if _, err := client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		_ = upstream.Close()
		_ = client.Close()
		return
	}
	go func() {
		defer func() { _ = upstream.Close() }()
		_, _ = io.Copy(upstream, buf)
	}()
	go func() {
		defer func() { _ = client.Close() }()
		_, _ = io.Copy(client, upstream)
	}()
}
