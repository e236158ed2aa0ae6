package testenv

import (
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
)

// RemoteAPI is a "managed cluster" in front of the test API server: a TLS
// reverse proxy on 127.0.0.1 that lets through only requests whose bearer
// token its check accepts, and forwards them with the control plane's own
// credentials (the Authorization header removed), as a cloud's
// authenticator stands in front of its cluster's API server.
type RemoteAPI struct {
	*httptest.Server
	check func(token string) (who string, err error)

	mu       sync.Mutex
	accepted []string
	refused  int
}

// StartRemoteAPI starts a RemoteAPI for cfg's API server whose check
// names who a bearer token is or refuses it (401); it stops when the test
// ends.
func StartRemoteAPI(t testing.TB, cfg *rest.Config, check func(token string) (who string, err error)) *RemoteAPI {
	t.Helper()
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = transport
	r := &RemoteAPI{check: check}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		token, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
		who, err := r.check(token)
		r.mu.Lock()
		if err != nil {
			r.refused++
		} else {
			r.accepted = append(r.accepted, who)
		}
		r.mu.Unlock()
		if err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`))
			return
		}
		req.Header.Del("Authorization")
		proxy.ServeHTTP(w, req)
	}))
	r.Config.ErrorLog = log.New(io.Discard, "", 0) // clients that hang up mid-handshake
	r.StartTLS()
	t.Cleanup(r.Close)
	return r
}

// Accepted returns who the requests let through were, in order, and how
// many were refused.
func (r *RemoteAPI) Accepted() (who []string, refused int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.accepted...), r.refused
}

// CAPEM is the PEM of the proxy's certificate, its clients' CA.
func (r *RemoteAPI) CAPEM() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate().Raw}))
}
