package artifact

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const secretOutside = "SECRET-OUTSIDE-STORAGE"

// newServedStorage stores one artifact and plants traps: a secret next to
// the storage root, links to it, a temporary file and a directory.
func newServedStorage(t testing.TB) (*Storage, []byte) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "storage")
	s, err := NewStorage(root, "localhost", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	writeTree(t, base, file("secret.txt", secretOutside), file("outside/default/x/y.tar.gz", secretOutside))

	a := s.NewArtifactFor("GitRepository", object("default", "podinfo"), "rev", "abc.tar.gz")
	content := []byte(strings.Repeat("artifact bytes ", 100))
	if err := s.Copy(context.Background(), &a, strings.NewReader(string(content))); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(root, "gitrepository", "default", "podinfo")
	writeTree(t, obj,
		symlink("escape.tar.gz", "../../../../secret.txt"),
		symlink("abs.tar.gz", filepath.Join(base, "secret.txt")),
		symlink("inside.tar.gz", "abc.tar.gz"),
		file(".abc.tar.gz.tmp-123", "partial"),
		dir("subdir"),
	)
	writeTree(t, root, symlink("linkedkind", "../outside"))
	return s, content
}

func TestServer(t *testing.T) {
	s, content := newServedStorage(t)
	h := NewServer(s).Handler()
	tests := []struct {
		method, target string
		want           int
	}{
		{"GET", "/gitrepository/default/podinfo/abc.tar.gz", 200},
		{"HEAD", "/gitrepository/default/podinfo/abc.tar.gz", 200},
		{"GET", "/gitrepository/default/podinfo/missing.tar.gz", 404},
		{"POST", "/gitrepository/default/podinfo/abc.tar.gz", 405},
		{"DELETE", "/gitrepository/default/podinfo/abc.tar.gz", 405},
		// No listings.
		{"GET", "/", 404},
		{"GET", "/gitrepository/", 404},
		{"GET", "/gitrepository/default/podinfo/", 404},
		{"GET", "/gitrepository/default/podinfo", 404},
		{"GET", "/gitrepository/default/podinfo/subdir", 404},
		// Escapes, plain and encoded.
		{"GET", "/../secret.txt", 404},
		{"GET", "/gitrepository/../../secret.txt", 404},
		{"GET", "/gitrepository/default/podinfo/../../../../secret.txt", 404},
		{"GET", "/%2e%2e/secret.txt", 404},
		{"GET", "/gitrepository/default/podinfo/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fsecret.txt", 404},
		{"GET", "/gitrepository%2fdefault%2fpodinfo%2fabc.tar.gz", 200}, // decodes to a clean, valid path
		{"GET", "/gitrepository/default/podinfo/..%5c..%5csecret.txt", 404},
		{"GET", "/gitrepository/default/podinfo/abc.tar.gz%00", 404},
		{"GET", "//gitrepository/default/podinfo/abc.tar.gz", 404},
		{"GET", "/gitrepository/default/podinfo/./abc.tar.gz", 404},
		{"GET", "/gitrepository/default//podinfo/abc.tar.gz", 404},
		// Links planted in the storage directory.
		{"GET", "/gitrepository/default/podinfo/escape.tar.gz", 404},
		{"GET", "/gitrepository/default/podinfo/abs.tar.gz", 404},
		{"GET", "/gitrepository/default/podinfo/inside.tar.gz", 404},
		{"GET", "/linkedkind/default/x/y.tar.gz", 404},
		// Temporary files.
		{"GET", "/gitrepository/default/podinfo/.abc.tar.gz.tmp-123", 404},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.target, nil))
			if rec.Code != tt.want {
				t.Fatalf("status = %d, want %d", rec.Code, tt.want)
			}
			body := rec.Body.String()
			if strings.Contains(body, secretOutside) {
				t.Fatal("served a file from outside the storage")
			}
			if tt.want != 200 {
				return
			}
			if got := rec.Header().Get("Content-Length"); got != strconv.Itoa(len(content)) {
				t.Errorf("Content-Length = %q, want %d", got, len(content))
			}
			if tt.method == "GET" && body != string(content) {
				t.Errorf("body = %d bytes, want the artifact", len(body))
			}
			if tt.method == "HEAD" && body != "" {
				t.Errorf("HEAD returned a body")
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/gzip" {
				t.Errorf("Content-Type = %q", ct)
			}
		})
	}
}

// TestServerOverTheWire sends raw request lines, which no client library
// would clean, to a real listener.
func TestServerOverTheWire(t *testing.T) {
	s, content := newServedStorage(t)
	srv := httptest.NewServer(NewServer(s).Handler())
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/gitrepository/default/podinfo/abc.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != int64(len(content)) || string(body) != string(content) {
		t.Fatalf("GET: %d, length %d, %d bytes", resp.StatusCode, resp.ContentLength, len(body))
	}

	req, _ := http.NewRequest("GET", srv.URL+"/gitrepository/default/podinfo/abc.tar.gz", nil)
	req.Header.Set("Range", "bytes=0-9")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || string(body) != string(content[:10]) {
		t.Errorf("Range: %d %q", resp.StatusCode, body)
	}

	for _, target := range []string{
		"/../secret.txt",
		"/gitrepository/default/podinfo/../../../../secret.txt",
		"/%2e%2e/%2e%2e/secret.txt",
		"/gitrepository/default/podinfo/escape.tar.gz",
	} {
		status, body := rawGet(t, srv.Listener.Addr().String(), target)
		if status != 404 || strings.Contains(body, secretOutside) {
			t.Errorf("%s: status %d, leaked %v", target, status, strings.Contains(body, secretOutside))
		}
	}
}

func rawGet(t *testing.T, addr, target string) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", target)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServerAfterRemoval(t *testing.T) {
	s, _ := newServedStorage(t)
	h := NewServer(s).Handler()
	if err := os.Remove(filepath.Join(s.BasePath(), "gitrepository", "default", "podinfo", "abc.tar.gz")); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/gitrepository/default/podinfo/abc.tar.gz", nil))
	if rec.Code != 404 {
		t.Fatalf("status = %d, want 404", rec.Code)
	}
}
