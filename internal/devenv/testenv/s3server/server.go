package s3server

import (
	"crypto/md5" //nolint:gosec // S3 ETags of single-part objects are MD5 sums
	"encoding/hex"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Options configures a Server. The zero value serves plain HTTP and lets
// anyone in.
type Options struct {
	// AccessKey and SecretKey, when AccessKey is set, make every request
	// require an AWS Signature Version 4 made with them (see doc.go).
	AccessKey, SecretKey string
	// Keys, when set, is the set of key pairs the server accepts (in
	// addition to AccessKey): it answers a request's access key id with
	// the secret key and the session token that must come with it (empty
	// for long-term keys). An STS fake's issued credentials plug in here.
	Keys func(accessKeyID string) (secretKey, sessionToken string, ok bool)
	// TLS serves HTTPS with a self-signed certificate; see CAPEM.
	TLS bool
}

// Counts are the HTTP requests a Server received, by kind.
type Counts struct {
	// Total is every request, answered or refused.
	Total int64
	// ObjectGets are GETs of an object: downloads.
	ObjectGets int64
	// ObjectHeads are HEADs of an object: stats.
	ObjectHeads int64
	// Lists are GETs of a bucket that list its objects.
	Lists int64
	// Denied are the requests the authentication check refused.
	Denied int64
}

// Server is an in-memory S3 endpoint.
type Server struct {
	backend *s3mem.Backend
	http    *httptest.Server
	caPEM   []byte

	total, objectGets, objectHeads, lists, denied atomic.Int64
	accepted                                      acceptedKeys
}

// keyring is the lookup the verifier signs against: Options.AccessKey's
// pair, then Options.Keys.
func keyring(opts Options) func(string) (string, string, bool) {
	return func(id string) (string, string, bool) {
		if opts.AccessKey != "" && id == opts.AccessKey {
			return opts.SecretKey, "", true
		}
		if opts.Keys != nil {
			return opts.Keys(id)
		}
		return "", "", false
	}
}

// AccessKeys returns the access key ids of the signed requests the server
// accepted, each once, in the order first seen: a test proves with it
// which credentials a client used.
func (s *Server) AccessKeys() []string { return s.accepted.list() }

// New starts a Server on 127.0.0.1 and stops it when the test ends.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{backend: s3mem.New()}
	h := gofakes3.New(s.backend).Server()
	if opts.AccessKey != "" || opts.Keys != nil {
		h = &verifier{keys: keyring(opts), next: h, denied: &s.denied, accepted: &s.accepted}
	}
	s.http = httptest.NewUnstartedServer(s.count(h))
	s.http.Config.ErrorLog = log.New(io.Discard, "", 0)
	if opts.TLS {
		s.http.StartTLS()
		s.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.http.Certificate().Raw})
	} else {
		s.http.Start()
	}
	t.Cleanup(s.http.Close)
	return s
}

// Endpoint is the server's address, 127.0.0.1:PORT, as a Bucket's
// spec.endpoint and minio.New take it.
func (s *Server) Endpoint() string {
	return strings.TrimPrefix(strings.TrimPrefix(s.http.URL, "http://"), "https://")
}

// URL is the server's base URL, http(s)://127.0.0.1:PORT.
func (s *Server) URL() string { return s.http.URL }

// CAPEM is the PEM certificate of the HTTPS server (nil without TLS), for
// tests that hand a custom CA to the client.
func (s *Server) CAPEM() []byte { return s.caPEM }

// CreateBucket creates an empty bucket.
func (s *Server) CreateBucket(t testing.TB, name string) {
	t.Helper()
	if err := s.backend.CreateBucket(name); err != nil {
		t.Fatalf("create bucket %q: %v", name, err)
	}
}

// PutObject stores content under key, replacing what was there, and returns
// the object's ETag without quotes (the hex MD5 of content), as minio-go
// reports it in listings.
func (s *Server) PutObject(t testing.TB, bucket, key, content string) string {
	t.Helper()
	// gofakes3 serves Last-Modified from this metadata entry, which its own
	// upload handler fills in.
	meta := map[string]string{"Last-Modified": time.Now().UTC().Format(http.TimeFormat)}
	if _, err := s.backend.PutObject(bucket, key, meta, strings.NewReader(content), int64(len(content)), nil); err != nil {
		t.Fatalf("put object %q in %q: %v", key, bucket, err)
	}
	sum := md5.Sum([]byte(content)) //nolint:gosec // see import
	return hex.EncodeToString(sum[:])
}

// DeleteObject removes key; a missing key is not an error.
func (s *Server) DeleteObject(t testing.TB, bucket, key string) {
	t.Helper()
	if _, err := s.backend.DeleteObject(bucket, key); err != nil {
		t.Fatalf("delete object %q in %q: %v", key, bucket, err)
	}
}

// Requests returns the requests received so far.
func (s *Server) Requests() Counts {
	return Counts{
		Total: s.total.Load(), ObjectGets: s.objectGets.Load(), ObjectHeads: s.objectHeads.Load(),
		Lists: s.lists.Load(), Denied: s.denied.Load(),
	}
}

// count classifies each request the way gofakes3 routes it: a path of
// /<bucket>/<key> addresses an object, /<bucket> the bucket.
func (s *Server) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.total.Add(1)
		bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		q := r.URL.Query()
		switch {
		case key != "" && r.Method == http.MethodGet:
			s.objectGets.Add(1)
		case key != "" && r.Method == http.MethodHead:
			s.objectHeads.Add(1)
		case bucket != "" && r.Method == http.MethodGet && !q.Has("location") && !q.Has("versioning") && !q.Has("uploads"):
			s.lists.Add(1)
		}
		next.ServeHTTP(w, r)
	})
}
