package awsfake

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

// RegistryProxy serves on 127.0.0.1 an HTTP proxy that sends every plain
// HTTP request, whatever its host, to the registry at target (a URL), and
// refuses CONNECT so that clients of an insecure registry fall back to
// plain HTTP. Given to an object as spec.proxySecretRef, it lets an image
// named <account>.dkr.ecr.<region>.amazonaws.com/... come from a local
// registry. It returns the proxy's URL and the hosts clients asked for.
func RegistryProxy(t testing.TB, target string) (proxyURL string, hosts func() []string) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Host)
		mu.Unlock()
		if r.Method == http.MethodConnect {
			http.Error(w, "this proxy speaks plain HTTP only", http.StatusMethodNotAllowed)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}
