package ociregistry

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// RequestLog records the requests a CountingProxy forwards, so tests can
// assert how many manifest and blob reads a client made.
type RequestLog struct {
	mu   sync.Mutex
	reqs []string // "METHOD /path"
}

// Count returns how many requests had method and a path containing part.
func (l *RequestLog) Count(method, part string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.reqs {
		m, p, _ := strings.Cut(r, " ")
		if m == method && strings.Contains(p, part) {
			n++
		}
	}
	return n
}

// String lists the requests, for failure messages.
func (l *RequestLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprint(l.reqs)
}

// CountingProxy serves on 127.0.0.1 a reverse proxy to the registry at
// target (a URL) that logs every request; it returns the proxy's host:port.
func CountingProxy(t testing.TB, target string) (host string, log *RequestLog) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	log = &RequestLog{}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.mu.Lock()
		log.reqs = append(log.reqs, r.Method+" "+r.URL.Path)
		log.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), log
}
