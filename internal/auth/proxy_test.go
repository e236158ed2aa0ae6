package auth_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weir-gitops/weir/internal/auth"
)

// TestWithProxy: an object's proxy carries the exchanges' cloud calls,
// except those to the node's own metadata and credential endpoints, and
// the copy keeps the settings it was made from.
func TestWithProxy(t *testing.T) {
	proxy, _ := url.Parse("http://user:pass@proxy.example:3128")
	cache := auth.NewCache(10, 0)
	base := &auth.Settings{ObjectLevel: true, Cache: cache}
	s := base.WithProxy(proxy)
	if s == base || s.Cache != cache || !s.ObjectLevel || s.Proxy != proxy || base.Proxy != nil {
		t.Fatalf("WithProxy = %+v from %+v", s, base)
	}
	if base.WithProxy(nil) != base {
		t.Error("WithProxy(nil) is not s itself")
	}
	if (*auth.Settings)(nil).WithProxy(proxy).Proxy != proxy {
		t.Error("nil Settings with a proxy has none")
	}
	if base.HTTPClient(http.DefaultClient) != http.DefaultClient || (*auth.Settings)(nil).HTTPClient(nil) != nil {
		t.Error("without a proxy HTTPClient is not base")
	}
	tr, ok := s.HTTPClient(nil).Transport.(*http.Transport)
	if !ok {
		t.Fatalf("transport %T", s.HTTPClient(nil).Transport)
	}
	for _, tt := range []struct {
		url     string
		proxied bool
	}{
		{"https://sts.amazonaws.com/", true},
		{"https://api.ecr.eu-west-1.amazonaws.com/", true},
		{"https://login.microsoftonline.com/tenant/oauth2/v2.0/token", true},
		{"http://127.0.0.1:8080/", true},
		{"http://169.254.169.254/latest/api/token", false},
		{"http://169.254.170.23/v1/credentials", false},
		{"http://[fd00:ec2::254]/latest/api/token", false},
		{"http://metadata.google.internal/computeMetadata/v1/", false},
	} {
		req, _ := http.NewRequest(http.MethodGet, tt.url, nil)
		got, err := tr.Proxy(req)
		if err != nil || (got != nil) != tt.proxied || (got != nil && got.String() != proxy.String()) {
			t.Errorf("%s: proxy %v, %v; want proxied %v", tt.url, got, err, tt.proxied)
		}
	}
}

// TestProxyRefusedTunnel: a proxy that answers a CONNECT with 407 fails
// the request with a ProxyRefusedError naming the host and the status,
// which Azure's SDK does not retry, and never the proxy's password.
func TestProxyRefusedTunnel(t *testing.T) {
	var connects atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		connects.Add(1)
		w.Header().Set("Proxy-Authenticate", `Basic realm="test"`)
		http.Error(w, "proxy authentication required", http.StatusProxyAuthRequired)
	}))
	defer proxy.Close()
	u, _ := url.Parse(proxy.URL)
	u.User = url.UserPassword("weir", "proxy-s3cret")
	for _, tt := range []struct {
		name   string
		client func(*auth.Settings) *http.Client
	}{
		{"HTTPClient", func(s *auth.Settings) *http.Client { return s.HTTPClient(nil) }},
		{"ProxyTransport", func(s *auth.Settings) *http.Client {
			tr := &http.Transport{}
			s.ProxyTransport(tr)
			return &http.Client{Transport: tr}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := connects.Load()
			_, err := tt.client((&auth.Settings{}).WithProxy(u)).Get("https://login.microsoftonline.com/common/discovery/instance")
			var refused *auth.ProxyRefusedError
			if !errors.As(err, &refused) || refused.Host != "login.microsoftonline.com:443" || refused.Status != "407 Proxy Authentication Required" {
				t.Fatalf("error %v, want a ProxyRefusedError for the 407", err)
			}
			var nonRetriable interface{ NonRetriable() }
			if !errors.As(err, &nonRetriable) {
				t.Error("the refusal is retriable for azcore")
			}
			if want := "the proxy refused to tunnel to login.microsoftonline.com:443: 407 Proxy Authentication Required"; !strings.Contains(err.Error(), want) ||
				strings.Contains(err.Error(), "proxy-s3cret") {
				t.Errorf("error %q, want %q and no password", err, want)
			}
			if n := connects.Load() - before; n != 1 {
				t.Errorf("%d CONNECTs, want 1", n)
			}
		})
	}
	var tr http.Transport
	(*auth.Settings)(nil).ProxyTransport(&tr)
	if tr.Proxy != nil || tr.OnProxyConnectResponse != nil {
		t.Error("ProxyTransport without a proxy changed the transport")
	}
}
