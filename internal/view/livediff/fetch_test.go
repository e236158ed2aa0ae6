package livediff

import (
	"net/url"
	"testing"
)

func TestServiceProxyURL(t *testing.T) {
	server, _ := url.Parse("https://127.0.0.1:6443/prefix")
	tests := []struct {
		in, want string
	}{
		{"http://source-controller.flux-system.svc.cluster.local./gitrepository/apps/repo/a.tar.gz",
			"https://127.0.0.1:6443/prefix/api/v1/namespaces/flux-system/services/http:source-controller:80/proxy/gitrepository/apps/repo/a.tar.gz"},
		{"http://source-controller.flux-system.svc:9090/x.tar.gz?v=1",
			"https://127.0.0.1:6443/prefix/api/v1/namespaces/flux-system/services/http:source-controller:9090/proxy/x.tar.gz?v=1"},
		{"https://sc.ns.svc.example.org/x.tar.gz",
			"https://127.0.0.1:6443/prefix/api/v1/namespaces/ns/services/https:sc:443/proxy/x.tar.gz"},
		{"http://127.0.0.1:8080/x.tar.gz", ""},
		{"http://example.com/x.tar.gz", ""},
		{"http://a.b.cluster.local/x.tar.gz", ""},
		{"ftp://sc.ns.svc/x.tar.gz", ""},
	}
	for _, tt := range tests {
		got, ok := serviceProxyURL(server, tt.in)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("serviceProxyURL(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
}
