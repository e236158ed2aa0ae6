package helmserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"sync"
	"testing"
	"time"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// Options configures a Server. The zero value serves without authentication.
type Options struct {
	// Username and Password, when Username is set, make every request require
	// basic auth.
	Username, Password string
	// TLS serves HTTPS with a self-signed certificate; CAPEM returns it for
	// a certSecretRef's ca.crt.
	TLS bool
	// ETag makes every file carry a strong ETag (its SHA-256), so that
	// If-None-Match gets 304; without it only Last-Modified is sent.
	ETag bool
}

// Request is one request the server answered, for tests that count
// downloads or check where credentials went.
type Request struct {
	Method, Path string
	// Authorization is true when the request carried an Authorization
	// header (right or wrong).
	Authorization bool
	// IfNoneMatch and IfModifiedSince are the conditional headers sent.
	IfNoneMatch, IfModifiedSince string
	// Status is the answer's status code.
	Status int
}

// Server is a Helm chart repository: a directory of chart archives and its
// index.yaml behind an HTTP file server.
type Server struct {
	http *httptest.Server
	opts Options
	dir  string
	mu   sync.Mutex // serialises packaging and indexing

	logMu sync.Mutex
	log   []Request
}

// New starts a Server on 127.0.0.1 with an empty index and stops it when the
// test ends.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{dir: t.TempDir(), opts: opts}
	h := http.FileServer(http.Dir(s.dir))
	if opts.ETag {
		h = s.withETag(h)
	}
	s.http = httptest.NewUnstartedServer(s.record(basicAuth(opts, h)))
	s.http.Config.ErrorLog = log.New(io.Discard, "", 0)
	if opts.TLS {
		s.http.StartTLS()
	} else {
		s.http.Start()
	}
	t.Cleanup(s.http.Close)
	if err := s.reindex(); err != nil {
		t.Fatalf("write empty index: %v", err)
	}
	return s
}

// URL is the repository URL, http(s)://127.0.0.1:PORT, as a
// HelmRepository's spec.url takes it.
func (s *Server) URL() string { return s.http.URL }

// CAPEM is the PEM certificate of a TLS server, for ca.crt; nil without
// Options.TLS.
func (s *Server) CAPEM() []byte {
	if s.http.Certificate() == nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.http.Certificate().Raw})
}

// Get fetches urlPath ("/index.yaml") as a client with the server's
// credentials and trust would, and returns the body.
func (s *Server) Get(t testing.TB, urlPath string) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL()+urlPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.opts.Username != "" {
		req.SetBasicAuth(s.opts.Username, s.opts.Password)
	}
	resp, err := s.http.Client().Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", urlPath, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", urlPath, resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// IndexDigest is sha256:<hex> of index.yaml as served: the revision a
// HelmRepository of this server reports.
func (s *Server) IndexDigest(t testing.TB) string {
	t.Helper()
	sum := sha256.Sum256(s.Get(t, "/index.yaml"))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Requests returns the requests answered so far for urlPath
// ("/index.yaml"), or all of them when urlPath is empty, oldest first.
func (s *Server) Requests(urlPath string) []Request {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	var out []Request
	for _, r := range s.log {
		if urlPath == "" || r.Path == urlPath {
			out = append(out, r)
		}
	}
	return out
}

// Downloads counts the requests for urlPath answered 200 OK: the times its
// content was sent.
func (s *Server) Downloads(urlPath string) int {
	n := 0
	for _, r := range s.Requests(urlPath) {
		if r.Status == http.StatusOK {
			n++
		}
	}
	return n
}

// WriteFile serves data at name (index.yaml, say) until the next AddChart
// re-indexes; tests write invalid or hand-made indexes with it.
func (s *Server) WriteFile(t testing.TB, name string, data []byte) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.WriteFile(filepath.Join(s.dir, filepath.Clean("/"+name)), data, 0o644); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
}

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

// Backdate moves the modification time of every file d into the past, so
// that its Last-Modified is a strong validator (a second or more before the
// response's Date) and If-Modified-Since gets 304.
func (s *Server) Backdate(t testing.TB, d time.Duration) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Now().Add(-d)
	for _, e := range entries {
		if err := os.Chtimes(filepath.Join(s.dir, e.Name()), when, when); err != nil {
			t.Fatal(err)
		}
	}
}

// record logs every request with the status it was answered.
func (s *Server) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		s.logMu.Lock()
		defer s.logMu.Unlock()
		s.log = append(s.log, Request{
			Method: r.Method, Path: r.URL.Path, Authorization: r.Header.Get("Authorization") != "",
			IfNoneMatch: r.Header.Get("If-None-Match"), IfModifiedSince: r.Header.Get("If-Modified-Since"),
			Status: sw.status,
		})
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// withETag sets a file's SHA-256 as its ETag before the file server runs,
// which then answers If-None-Match itself.
func (s *Server) withETag(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		data, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(path.Clean("/"+r.URL.Path))))
		s.mu.Unlock()
		if err == nil {
			sum := sha256.Sum256(data)
			w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
		}
		next.ServeHTTP(w, r)
	})
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
