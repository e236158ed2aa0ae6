// Package gcsserver owns the Google Cloud Storage endpoint weir's tests
// read buckets from: fake-gcs-server's in-process server (the JSON API
// under /storage/v1/ and the XML reads cloud.google.com/go/storage
// sends), on 127.0.0.1, behind a check that every request carries one of
// the bearer tokens the test accepts (fake-gcs-server checks none), and
// a record of the tokens it received, so a test proves whose identity
// reached the bucket.
package gcsserver

import (
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// Server is a running GCS endpoint.
type Server struct {
	gcs  *fakestorage.Server
	addr string

	accept func(token string) bool

	mu   sync.Mutex
	seen []string
}

// Accept accepts exactly the given tokens.
func Accept(tokens ...string) func(string) bool {
	return func(token string) bool { return slices.Contains(tokens, token) }
}

// New starts a Server that accepts the bearer tokens accept says yes to,
// and stops it when the test ends.
func New(t testing.TB, accept func(token string) bool) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{addr: l.Addr().String(), accept: accept}
	// PublicHost makes fake-gcs-server answer the XML reads
	// (/<bucket>/<object>) on this address.
	s.gcs, err = fakestorage.NewServerWithOptions(fakestorage.Options{NoListener: true, PublicHost: s.addr, Scheme: "http"})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s.check(s.gcs.HTTPHandler())} //nolint:gosec // test server on 127.0.0.1
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close(); s.gcs.Stop() })
	return s
}

// Endpoint is host:port, a gcp Bucket's spec.endpoint (with insecure).
func (s *Server) Endpoint() string { return s.addr }

// Tokens returns the bearer tokens of the requests received, each once.
func (s *Server) Tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// CreateBucket makes an empty bucket.
func (s *Server) CreateBucket(name string) {
	s.gcs.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: name})
}

// PutObject stores content at key and returns the ETag listings report.
func (s *Server) PutObject(t testing.TB, bucket, key, content string) string {
	t.Helper()
	s.gcs.CreateObject(fakestorage.Object{
		ObjectAttrs: fakestorage.ObjectAttrs{BucketName: bucket, Name: key}, Content: []byte(content),
	})
	obj, err := s.gcs.GetObject(bucket, key)
	if err != nil {
		t.Fatal(err)
	}
	return obj.Etag
}

// check answers 401 (the JSON API's error body) to a request without an
// accepted bearer token.
func (s *Server) check(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		if token != "" && !slices.Contains(s.seen, token) {
			s.seen = append(s.seen, token)
		}
		s.mu.Unlock()
		ok := token != "" && s.accept(token)
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
				"code": 401, "message": "Invalid Credentials",
				"errors": []map[string]string{{"domain": "global", "reason": "authError", "message": "Invalid Credentials"}},
			}})
			return
		}
		next.ServeHTTP(w, r)
	})
}
