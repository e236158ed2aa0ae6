package bucket

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weir-gitops/weir/internal/devenv/testenv/s3server"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

var creds = &Credentials{AccessKey: "weir", SecretKey: "s3cret"}

func newServer(t *testing.T) *s3server.Server {
	t.Helper()
	return s3server.New(t, s3server.Options{AccessKey: creds.AccessKey, SecretKey: creds.SecretKey})
}

func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestListIndexDownload(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	srv.CreateBucket(t, "manifests")
	etags := map[string]string{}
	for k, v := range map[string]string{
		"apps/app.yaml":      "kind: ConfigMap\n",
		"apps/base/svc.yaml": "kind: Service\n",
		"apps/notes.md":      "# notes\n",
		"infra/ns.yaml":      "kind: Namespace\n",
		".sourceignore":      "*.md\n",
	} {
		etags[k] = srv.PutObject(t, "manifests", k, v)
	}
	c := newClient(t, Config{Endpoint: srv.Endpoint(), Insecure: true, Credentials: creds})

	l, err := c.List(ctx, "manifests", "apps/")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Objects) != 3 {
		t.Errorf("listed %d objects under apps/, want 3: %+v", len(l.Objects), l.Objects)
	}
	if l.IgnoreFile == nil || l.IgnoreFile.ETag != etags[".sourceignore"] {
		t.Fatalf("root .sourceignore not found outside the prefix: %+v", l.IgnoreFile)
	}
	text, err := c.ReadIgnoreFile(ctx, "manifests", *l.IgnoreFile)
	if err != nil || text != "*.md\n" {
		t.Fatalf("ReadIgnoreFile = %q, %v", text, err)
	}
	ix, err := NewIndex("manifests", l.Objects, artifact.NewFilterFromRules(artifact.IgnoreRules{Text: text}))
	if err != nil {
		t.Fatal(err)
	}
	want := Index{
		"apps/app.yaml":      {Key: "apps/app.yaml", ETag: etags["apps/app.yaml"], Size: 16},
		"apps/base/svc.yaml": {Key: "apps/base/svc.yaml", ETag: etags["apps/base/svc.yaml"], Size: 14},
	}
	if diff := cmp.Diff(want, ix); diff != "" {
		t.Errorf("index (-want +got):\n%s", diff)
	}

	dir := t.TempDir()
	before := srv.Requests()
	got, err := c.Download(ctx, "manifests", ix, dir, DownloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("downloaded index (-want +got):\n%s", diff)
	}
	if n := srv.Requests().ObjectGets - before.ObjectGets; n != 2 {
		t.Errorf("%d object GETs for 2 objects", n)
	}
	assertFiles(t, dir, map[string]string{"apps/app.yaml": "kind: ConfigMap\n", "apps/base/svc.yaml": "kind: Service\n"})

	// Without a prefix the listing holds the .sourceignore: no extra HEAD.
	heads := srv.Requests().ObjectHeads
	l, err = c.List(ctx, "manifests", "")
	if err != nil || l.IgnoreFile == nil || len(l.Objects) != 5 {
		t.Fatalf("full listing: %+v, %v", l, err)
	}
	if srv.Requests().ObjectHeads != heads {
		t.Error("a HEAD for a .sourceignore that the listing showed")
	}
}

func TestListWithoutIgnoreFile(t *testing.T) {
	srv := newServer(t)
	srv.CreateBucket(t, "bkt")
	srv.PutObject(t, "bkt", "x/a.yaml", "a")
	c := newClient(t, Config{Endpoint: srv.Endpoint(), Insecure: true, Credentials: creds})
	l, err := c.List(context.Background(), "bkt", "x/")
	if err != nil || l.IgnoreFile != nil || len(l.Objects) != 1 {
		t.Fatalf("List = %+v, %v", l, err)
	}
	if srv.Requests().ObjectGets != 0 {
		t.Error("listing downloaded an object")
	}
}

func TestDownloadChangedAndVanishedObjects(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	srv.CreateBucket(t, "bkt")
	srv.PutObject(t, "bkt", "a.yaml", "a: 1\n")
	srv.PutObject(t, "bkt", "gone.yaml", "x\n")
	c := newClient(t, Config{Endpoint: srv.Endpoint(), Insecure: true, Credentials: creds})
	l, err := c.List(ctx, "bkt", "")
	if err != nil {
		t.Fatal(err)
	}
	ix, err := NewIndex("bkt", l.Objects, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Between listing and download, one object changes, one goes away.
	newETag := srv.PutObject(t, "bkt", "a.yaml", "a: 2\n")
	srv.DeleteObject(t, "bkt", "gone.yaml")
	got, err := c.Download(ctx, "bkt", ix, t.TempDir(), DownloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["a.yaml"].ETag != newETag {
		t.Errorf("downloaded index %+v, want a.yaml with etag %s only", got, newETag)
	}
}

func TestDownloadRefusesUnsafeKeys(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	srv.CreateBucket(t, "bkt")
	for _, k := range []string{"../evil.yaml", "/etc/weir-evil", "a/../../evil.yaml", "link/evil.yaml", "ok.yaml"} {
		srv.PutObject(t, "bkt", k, "evil\n")
	}
	c := newClient(t, Config{Endpoint: srv.Endpoint(), Insecure: true, Credentials: creds})
	_, etcErr := os.Lstat("/etc/weir-evil")

	for _, key := range []string{"../evil.yaml", "/etc/weir-evil", "a/../../evil.yaml", "link/evil.yaml"} {
		t.Run(key, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "download")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			// A link planted in the directory must not be followed out.
			if err := os.Symlink(parent, filepath.Join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			// Download is given the key as if the index had let it through.
			ix := Index{key: {Key: key}, "ok.yaml": {Key: "ok.yaml"}}
			_, err := c.Download(ctx, "bkt", ix, dir, DownloadOptions{})
			if err == nil {
				t.Fatal("unsafe key downloaded")
			}
			if !strings.Contains(err.Error(), "'"+key+"'") {
				t.Errorf("error does not name the key: %v", err)
			}
			assertNoEvil(t, parent)
		})
	}
	if _, err := os.Lstat("/etc/weir-evil"); etcErr != nil && err == nil {
		t.Error("/etc/weir-evil was written")
	}
}

func TestDownloadSizeBound(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	srv.CreateBucket(t, "bkt")
	srv.PutObject(t, "bkt", "big.yaml", strings.Repeat("x", 100))
	c := newClient(t, Config{Endpoint: srv.Endpoint(), Insecure: true, Credentials: creds})

	gets := srv.Requests().ObjectGets
	_, err := c.Download(ctx, "bkt", Index{"big.yaml": {Key: "big.yaml", Size: 100}}, t.TempDir(), DownloadOptions{MaxSize: 50})
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("listed size over the bound: %v", err)
	}
	if srv.Requests().ObjectGets != gets {
		t.Error("downloaded although the listing was over the bound")
	}
	// A listing that understates the size is caught while streaming.
	_, err = c.Download(ctx, "bkt", Index{"big.yaml": {Key: "big.yaml", Size: 1}}, t.TempDir(), DownloadOptions{MaxSize: 50})
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("streamed size over the bound: %v", err)
	}
}

func TestListErrors(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	srv.CreateBucket(t, "bkt")
	tests := []struct {
		name   string
		cfg    Config
		bucket string
		want   []string
		is     error
	}{
		{
			name: "wrong secret key", cfg: Config{Credentials: &Credentials{AccessKey: "weir", SecretKey: "guess"}}, bucket: "bkt",
			want: []string{"failed to confirm existence of 'bkt' bucket", "signature"},
		},
		{
			name: "unknown access key", cfg: Config{Credentials: &Credentials{AccessKey: "who", SecretKey: "s3cret"}}, bucket: "bkt",
			want: []string{"failed to confirm existence of 'bkt' bucket", "Access Key Id"},
		},
		{
			name: "anonymous", cfg: Config{}, bucket: "bkt",
			want: []string{"failed to confirm existence of 'bkt' bucket", "Access Denied"},
		},
		{
			name: "missing bucket", cfg: Config{Credentials: creds}, bucket: "nope",
			want: []string{"bucket 'nope' not found"}, is: ErrBucketNotFound,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Endpoint, tt.cfg.Insecure = srv.Endpoint(), true
			_, err := newClient(t, tt.cfg).List(ctx, tt.bucket, "")
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "guess") {
				t.Errorf("error leaks a secret key: %v", err)
			}
		})
	}
}

func TestTLSAndProxy(t *testing.T) {
	ctx := context.Background()
	srv := s3server.New(t, s3server.Options{AccessKey: "weir", SecretKey: "s3cret", TLS: true})
	srv.CreateBucket(t, "bkt")
	srv.PutObject(t, "bkt", "a.yaml", "a")

	// Without the CA the server's certificate is unknown.
	_, err := newClient(t, Config{Endpoint: srv.Endpoint(), Credentials: creds}).List(ctx, "bkt", "")
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("untrusted certificate: %v", err)
	}
	cfg, err := TLSFromSecret(map[string][]byte{"ca.crt": srv.CAPEM()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newClient(t, Config{Endpoint: srv.Endpoint(), Credentials: creds, TLS: cfg}).List(ctx, "bkt", ""); err != nil {
		t.Fatalf("with ca.crt: %v", err)
	}
	if _, err := newClient(t, Config{Endpoint: "https://" + srv.Endpoint(), Credentials: creds, TLS: cfg}).List(ctx, "bkt", ""); err != nil {
		t.Fatalf("https:// endpoint: %v", err)
	}

	// Through an HTTP CONNECT proxy.
	var tunnels atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		tunnels.Add(1)
		connectTunnel(w, r)
	}))
	t.Cleanup(proxy.Close)
	u, _ := url.Parse(proxy.URL)
	c := newClient(t, Config{Endpoint: srv.Endpoint(), Credentials: creds, TLS: cfg, Proxy: u})
	if _, err := c.List(ctx, "bkt", ""); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	if tunnels.Load() == 0 {
		t.Error("the proxy was not used")
	}
}

// connectTunnel splices a CONNECT request to its target. It hijacks the
// connection before answering: a 200 written through the ResponseWriter is
// flushed before the hijack, and the client's first TLS bytes could then be
// read into the server's buffer, so the tunnel copies from that buffer too.
func connectTunnel(w http.ResponseWriter, r *http.Request) {
	dst, err := net.Dial("tcp", r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		dst.Close()
		return
	}
	src, buf, err := hj.Hijack()
	if err != nil {
		dst.Close()
		return
	}
	if _, err := io.WriteString(src, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		src.Close()
		dst.Close()
		return
	}
	go func() { _, _ = io.Copy(dst, buf.Reader); dst.Close() }()
	go func() { _, _ = io.Copy(src, dst); src.Close() }()
}

func assertFiles(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

// assertNoEvil fails when a file named evil.yaml exists anywhere under root
// or next to it.
func assertNoEvil(t *testing.T, root string) {
	t.Helper()
	for _, p := range []string{filepath.Join(filepath.Dir(root), "evil.yaml"), filepath.Join(root, "evil.yaml")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "evil.yaml" {
			t.Errorf("%s was written", p)
		}
		return nil
	})
}
