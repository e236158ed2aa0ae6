package auth_test

import (
	"net/http"
	"net/url"
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
