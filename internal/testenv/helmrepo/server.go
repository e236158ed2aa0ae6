package helmrepo

import (
	"crypto/subtle"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// Options configures a Server. The zero value serves without authentication.
type Options struct {
	// Username and Password, when Username is set, make every request require
	// basic auth.
	Username, Password string
}

// Server is a Helm chart repository: a directory of chart archives and its
// index.yaml behind an HTTP file server.
type Server struct {
	http *httptest.Server
	dir  string
	mu   sync.Mutex // serialises packaging and indexing
}

// New starts a Server on 127.0.0.1 with an empty index and stops it when the
// test ends.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{dir: t.TempDir()}
	s.http = httptest.NewUnstartedServer(basicAuth(opts, http.FileServer(http.Dir(s.dir))))
	s.http.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.http.Start()
	t.Cleanup(s.http.Close)
	if err := s.reindex(); err != nil {
		t.Fatalf("write empty index: %v", err)
	}
	return s
}

// URL is the repository URL, http://127.0.0.1:PORT, as a HelmRepository's
// spec.url takes it.
func (s *Server) URL() string { return s.http.URL }

// AddChart packages ch into the repository, re-indexes it and returns the
// absolute URL of the chart archive. Adding a version that exists replaces it.
func (s *Server) AddChart(t testing.TB, ch *chartv2.Chart) string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	path, err := chartutil.Save(ch, s.dir)
	if err != nil {
		t.Fatalf("package chart %s-%s: %v", ch.Name(), ch.Metadata.Version, err)
	}
	if err := s.reindex(); err != nil {
		t.Fatalf("index after adding %s: %v", filepath.Base(path), err)
	}
	return s.URL() + "/" + filepath.Base(path)
}

// reindex rewrites index.yaml from the archives on disk.
func (s *Server) reindex() error {
	index, err := repo.IndexDirectory(s.dir, s.URL())
	if err != nil {
		return fmt.Errorf("index %s: %w", s.dir, err)
	}
	index.SortEntries()
	if err := index.WriteFile(filepath.Join(s.dir, "index.yaml"), 0o644); err != nil {
		return fmt.Errorf("write index.yaml: %w", err)
	}
	return nil
}

// basicAuth answers 401 with a Basic challenge unless the request carries
// the credentials opts asks for.
func basicAuth(opts Options, next http.Handler) http.Handler {
	if opts.Username == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || !equal(user, opts.Username) || !equal(pass, opts.Password) {
			w.Header().Set("WWW-Authenticate", `Basic realm="weir-test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
