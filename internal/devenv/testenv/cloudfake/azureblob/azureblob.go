// Package azureblob is a small fake of the Azure Blob Storage REST API, on
// 127.0.0.1, for what a Bucket reads: Get Container Properties
// (?restype=container), List Blobs (?restype=container&comp=list with
// prefix, marker and maxresults, answered as the service's
// EnumerationResults XML with NextMarker), Get Blob and Get Blob
// Properties. The account is the path's first segment, as the storage
// emulator (Azurite) addresses it: http://127.0.0.1:PORT/<account>.
//
// Every request must be authorized one of the ways the service accepts:
// a Shared Key signature (Authorization: SharedKey <account>:<sig>, the
// string to sign rebuilt from the verb, the standard headers, the x-ms-*
// headers and the canonicalized resource, and checked against the
// account key), a bearer token the test accepts, or a SAS whose sig is
// the test's. Refusals are 403 with x-ms-error-code and the service's
// XML error body. Auths records which way each request came in.
package azureblob

import (
	"crypto/hmac"
	"crypto/md5" //nolint:gosec // ETags only name versions
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Options say what the fake accepts.
type Options struct {
	// Account is the storage account name; "weiracct" when empty.
	Account string
	// Key is the base64 account key Shared Key signatures are checked
	// against; one is generated when empty (see Server.Key).
	Key string
	// Tokens are the bearer tokens accepted.
	Tokens []string
	// SASSignature is the sig of the one SAS accepted; none when empty.
	SASSignature string
	// PageSize is List Blobs' page size when the client asks for more;
	// 5000 (the service's) when zero.
	PageSize int
}

type blob struct {
	content  []byte
	etag     string
	modified time.Time
}

// Server is a running fake.
type Server struct {
	opts Options
	srv  *httptest.Server

	mu         sync.Mutex
	containers map[string]map[string]blob
	auths      []string
	n          int
}

// New starts a fake until the test ends.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.Account == "" {
		opts.Account = "weiracct"
	}
	if opts.Key == "" {
		opts.Key = base64.StdEncoding.EncodeToString([]byte("azureblob-fake-account-key-0123456789"))
	}
	if opts.PageSize == 0 {
		opts.PageSize = 5000
	}
	s := &Server{opts: opts, containers: map[string]map[string]blob{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// Endpoint is the account's URL, an azure Bucket's spec.endpoint.
func (s *Server) Endpoint() string { return s.srv.URL + "/" + s.opts.Account }

// Key is the account key (a Secret's accountKey).
func (s *Server) Key() string { return s.opts.Key }

// Auths returns how each request was authorized, in order: "sharedkey",
// "sas" or "bearer <token>".
func (s *Server) Auths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.auths)
}

// CreateContainer makes an empty container.
func (s *Server) CreateContainer(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.containers[name] = map[string]blob{}
}

// PutBlob stores content under name and returns the blob's ETag as the
// service sends it (quoted).
func (s *Server) PutBlob(container, name, content string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	sum := md5.Sum([]byte(fmt.Sprintf("%d/%s", s.n, content))) //nolint:gosec // see import
	etag := `"0x8D` + strings.ToUpper(hex.EncodeToString(sum[:6])) + `"`
	s.containers[container][name] = blob{content: []byte(content), etag: etag, modified: time.Now().UTC()}
	return etag
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	account, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	container, name, _ := strings.Cut(rest, "/")
	auth, ok := s.authorize(r, account)
	s.mu.Lock()
	s.auths = append(s.auths, auth)
	s.mu.Unlock()
	q := r.URL.Query()
	switch {
	case !ok:
		storageError(w, r, http.StatusForbidden, "AuthenticationFailed",
			"Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.")
	case account != s.opts.Account:
		storageError(w, r, http.StatusBadRequest, "InvalidUri", "The requested URI does not represent any resource on the server.")
	case name == "" && q.Get("restype") == "container" && q.Get("comp") == "list":
		s.list(w, r, container)
	case name == "" && q.Get("restype") == "container":
		s.containerProperties(w, r, container)
	case name != "" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		s.getBlob(w, r, container, name)
	default:
		storageError(w, r, http.StatusBadRequest, "UnsupportedHttpVerb", "The resource doesn't support the specified HTTP verb.")
	}
}

// authorize checks the request's credentials and names them.
func (s *Server) authorize(r *http.Request, account string) (string, bool) {
	h := r.Header.Get("Authorization")
	if token, ok := strings.CutPrefix(h, "Bearer "); ok {
		return "bearer " + token, slices.Contains(s.opts.Tokens, token) && r.Header.Get("x-ms-version") != ""
	}
	if sig, ok := strings.CutPrefix(h, "SharedKey "+account+":"); ok {
		return "sharedkey", hmac.Equal([]byte(sig), []byte(s.sharedKey(r, account)))
	}
	if sig := r.URL.Query().Get("sig"); sig != "" {
		return "sas", s.opts.SASSignature != "" && sig == s.opts.SASSignature
	}
	return "anonymous", false
}

// sharedKey is the Shared Key signature of r (Blob service, version
// 2009-09-19 and later).
func (s *Server) sharedKey(r *http.Request, account string) string {
	length := r.Header.Get("Content-Length")
	if length == "0" {
		length = ""
	}
	parts := []string{r.Method}
	for _, k := range []string{"Content-Encoding", "Content-Language"} {
		parts = append(parts, r.Header.Get(k))
	}
	parts = append(parts, length)
	for _, k := range []string{"Content-MD5", "Content-Type", "Date", "If-Modified-Since", "If-Match", "If-None-Match", "If-Unmodified-Since", "Range"} {
		parts = append(parts, r.Header.Get(k))
	}
	var msHeaders []string
	for k := range r.Header {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-ms-") {
			msHeaders = append(msHeaders, lk+":"+strings.TrimSpace(r.Header.Get(k)))
		}
	}
	sort.Strings(msHeaders)
	resource := "/" + account + r.URL.EscapedPath()
	q := r.URL.Query()
	names := make([]string, 0, len(q))
	for k := range q {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		vals := slices.Clone(q[k])
		sort.Strings(vals)
		resource += "\n" + strings.ToLower(k) + ":" + strings.Join(vals, ",")
	}
	toSign := strings.Join(parts, "\n") + "\n" + strings.Join(msHeaders, "\n") + "\n" + resource
	key, _ := base64.StdEncoding.DecodeString(s.opts.Key)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(toSign))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func (s *Server) containerProperties(w http.ResponseWriter, r *http.Request, container string) {
	s.mu.Lock()
	_, ok := s.containers[container]
	s.mu.Unlock()
	if !ok {
		storageError(w, r, http.StatusNotFound, "ContainerNotFound", "The specified container does not exist.")
		return
	}
	w.Header().Set("ETag", `"0x8DCONTAINER"`)
	w.Header().Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
	w.Header().Set("x-ms-version", r.Header.Get("x-ms-version"))
	w.WriteHeader(http.StatusOK)
}

type listResult struct {
	XMLName         xml.Name   `xml:"EnumerationResults"`
	ServiceEndpoint string     `xml:"ServiceEndpoint,attr"`
	ContainerName   string     `xml:"ContainerName,attr"`
	Prefix          string     `xml:"Prefix"`
	Marker          string     `xml:"Marker"`
	MaxResults      int        `xml:"MaxResults"`
	Blobs           []listBlob `xml:"Blobs>Blob"`
	NextMarker      string     `xml:"NextMarker"`
}

type listBlob struct {
	Name       string `xml:"Name"`
	Properties struct {
		LastModified  string `xml:"Last-Modified"`
		Etag          string `xml:"Etag"`
		ContentLength int    `xml:"Content-Length"`
		BlobType      string `xml:"BlobType"`
	} `xml:"Properties"`
}

// list answers one page of names after marker, in name order.
func (s *Server) list(w http.ResponseWriter, r *http.Request, container string) {
	q := r.URL.Query()
	s.mu.Lock()
	blobs, ok := s.containers[container]
	var names []string
	for n := range blobs {
		if strings.HasPrefix(n, q.Get("prefix")) && n > q.Get("marker") {
			names = append(names, n)
		}
	}
	s.mu.Unlock()
	if !ok {
		storageError(w, r, http.StatusNotFound, "ContainerNotFound", "The specified container does not exist.")
		return
	}
	sort.Strings(names)
	size := s.opts.PageSize
	if m, err := strconv.Atoi(q.Get("maxresults")); err == nil && m > 0 && m < size {
		size = m
	}
	res := listResult{ServiceEndpoint: s.Endpoint() + "/", ContainerName: container, Prefix: q.Get("prefix"),
		Marker: q.Get("marker"), MaxResults: size}
	if len(names) > size {
		names, res.NextMarker = names[:size], names[size-1]
	}
	s.mu.Lock()
	for _, n := range names {
		b := blobs[n]
		var lb listBlob
		lb.Name = n
		lb.Properties.LastModified, lb.Properties.Etag = b.modified.Format(http.TimeFormat), b.etag
		lb.Properties.ContentLength, lb.Properties.BlobType = len(b.content), "BlockBlob"
		res.Blobs = append(res.Blobs, lb)
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/xml")
	_, _ = w.Write([]byte(xml.Header))
	_ = xml.NewEncoder(w).Encode(res)
}

func (s *Server) getBlob(w http.ResponseWriter, r *http.Request, container, name string) {
	name, _ = url.PathUnescape(name)
	s.mu.Lock()
	b, ok := s.containers[container][name]
	s.mu.Unlock()
	if !ok {
		storageError(w, r, http.StatusNotFound, "BlobNotFound", "The specified blob does not exist.")
		return
	}
	w.Header().Set("ETag", b.etag)
	w.Header().Set("Last-Modified", b.modified.Format(http.TimeFormat))
	w.Header().Set("Content-Length", strconv.Itoa(len(b.content)))
	w.Header().Set("x-ms-blob-type", "BlockBlob")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(b.content)
	}
}

type storageErrorBody struct {
	XMLName xml.Name `xml:"Error"`
	Code    string   `xml:"Code"`
	Message string   `xml:"Message"`
}

// storageError answers the service's error: x-ms-error-code and, but for
// HEAD, the XML body.
func storageError(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	w.Header().Set("x-ms-error-code", code)
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(xml.Header))
		_ = xml.NewEncoder(w).Encode(storageErrorBody{Code: code, Message: msg})
	}
}
