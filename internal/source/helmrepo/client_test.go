package helmrepo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv/helmserver"
)

const (
	ns       = "apps"
	user     = "helm-user"
	password = "s3cr3t-helm-password"
)

func helmRepo(url string, mutate ...func(*sourcev1.HelmRepository)) *sourcev1.HelmRepository {
	r := &sourcev1.HelmRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo"},
		Spec:       sourcev1.HelmRepositorySpec{URL: url},
	}
	for _, m := range mutate {
		m(r)
	}
	return r
}

func withSecret(name string) func(*sourcev1.HelmRepository) {
	return func(r *sourcev1.HelmRepository) { r.Spec.SecretRef = &meta.LocalObjectReference{Name: name} }
}

func withCertSecret(name string) func(*sourcev1.HelmRepository) {
	return func(r *sourcev1.HelmRepository) { r.Spec.CertSecretRef = &meta.LocalObjectReference{Name: name} }
}

func secret(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func reader(objs ...client.Object) client.Reader {
	return fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).Build()
}

func newClient(t *testing.T, r *sourcev1.HelmRepository, limits Limits, objs ...client.Object) *Client {
	t.Helper()
	c, err := NewClient(context.Background(), reader(objs...), r, limits, nil)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

func TestFetchIndexRevisionIsDigestOfServedBytes(t *testing.T) {
	srv := helmserver.New(t, helmserver.Options{Username: user, Password: password})
	srv.AddChart(t, helmserver.NewChart("podinfo", "6.0.0", "6.0.0"))
	srv.AddChart(t, helmserver.NewChart("podinfo", "6.1.0", "6.1.0"))
	c := newClient(t, helmRepo(srv.URL(), withSecret("auth")), Limits{},
		secret("auth", map[string]string{UsernameKey: user, PasswordKey: password}))

	ix, changed, err := c.FetchIndex(context.Background(), Previous{})
	if err != nil || !changed {
		t.Fatalf("FetchIndex = changed %v, %v", changed, err)
	}
	body := srv.Get(t, "/index.yaml")
	if want := srv.IndexDigest(t); ix.Digest != want {
		t.Errorf("digest %s, want %s (sha256 of the served bytes)", ix.Digest, want)
	}
	if ix.Size != int64(len(body)) {
		t.Errorf("size %d, want %d", ix.Size, len(body))
	}
	cvs := ix.File.Entries["podinfo"]
	if len(cvs) != 2 || cvs[0].Version != "6.1.0" {
		t.Fatalf("entries %v, want 6.1.0 first", cvs)
	}
	if got, _ := ix.File.Get("podinfo", "6.0.x"); got == nil || got.Version != "6.0.0" {
		t.Errorf("resolve 6.0.x = %v", got)
	}
}

func TestFetchIndexSkipsUnchanged(t *testing.T) {
	tests := []struct {
		name string
		opts helmserver.Options
		// prev turns the first fetch into what the second one sends.
		prev func(*Index) Previous
		// downloads is how many times the index is sent in all.
		downloads int
	}{
		{name: "etag", opts: helmserver.Options{ETag: true}, prev: (*Index).Previous, downloads: 1},
		{name: "last-modified", prev: func(i *Index) Previous { return Previous{LastModified: i.LastModified} }, downloads: 1},
		{name: "same digest, no validators", prev: func(i *Index) Previous { return Previous{Digest: i.Digest} }, downloads: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := helmserver.New(t, tt.opts)
			srv.AddChart(t, helmserver.NewChart("podinfo", "6.0.0", "6.0.0"))
			srv.Backdate(t, time.Minute)
			c := newClient(t, helmRepo(srv.URL()), Limits{})
			first, changed, err := c.FetchIndex(context.Background(), Previous{})
			if err != nil || !changed {
				t.Fatalf("first FetchIndex = %v, %v", changed, err)
			}
			second, changed, err := c.FetchIndex(context.Background(), tt.prev(first))
			if err != nil {
				t.Fatal(err)
			}
			if changed || second.File != nil {
				t.Errorf("second FetchIndex changed=%v parsed=%v, want neither", changed, second.File != nil)
			}
			if got := srv.Downloads("/index.yaml"); got != tt.downloads {
				t.Errorf("index sent %d times, want %d", got, tt.downloads)
			}
			if tt.downloads == 2 && second.Digest != first.Digest {
				t.Errorf("digest %s, want %s", second.Digest, first.Digest)
			}
		})
	}
}

func TestStrongLastModified(t *testing.T) {
	const lm = "Tue, 01 Dec 2026 11:00:00 GMT"
	tests := []struct{ date, want string }{
		{date: "Tue, 01 Dec 2026 11:00:00 GMT", want: ""},
		{date: "Tue, 01 Dec 2026 11:00:01 GMT", want: lm},
		{date: "Tue, 01 Dec 2026 12:00:00 GMT", want: lm},
		{date: "", want: ""},
	}
	for _, tt := range tests {
		h := http.Header{"Last-Modified": {lm}, "Date": {tt.date}}
		if got := strongLastModified(h); got != tt.want {
			t.Errorf("Date %q: got %q, want %q", tt.date, got, tt.want)
		}
	}
	if got := strongLastModified(http.Header{"Date": {lm}}); got != "" {
		t.Errorf("no Last-Modified: got %q", got)
	}
}

func TestFetchIndexChangedAfterNewChart(t *testing.T) {
	srv := helmserver.New(t, helmserver.Options{ETag: true})
	srv.AddChart(t, helmserver.NewChart("podinfo", "6.0.0", "6.0.0"))
	c := newClient(t, helmRepo(srv.URL()), Limits{})
	first, _, err := c.FetchIndex(context.Background(), Previous{})
	if err != nil {
		t.Fatal(err)
	}
	srv.AddChart(t, helmserver.NewChart("podinfo", "6.2.0", "6.2.0"))
	second, changed, err := c.FetchIndex(context.Background(), first.Previous())
	if err != nil || !changed {
		t.Fatalf("FetchIndex after a new chart = %v, %v", changed, err)
	}
	if second.Digest == first.Digest || second.File.Entries["podinfo"][0].Version != "6.2.0" {
		t.Errorf("digest %s (was %s), newest %s", second.Digest, first.Digest, second.File.Entries["podinfo"][0].Version)
	}
}

func TestFetchIndexOverLimit(t *testing.T) {
	srv := helmserver.New(t, helmserver.Options{})
	srv.AddChart(t, helmserver.NewChart("podinfo", "6.0.0", "6.0.0"))
	size := int64(len(srv.Get(t, "/index.yaml")))
	for _, limit := range []int64{size - 1, 16} {
		c := newClient(t, helmRepo(srv.URL()), Limits{MaxIndexSize: limit})
		_, _, err := c.FetchIndex(context.Background(), Previous{})
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("limit %d: err = %v, want ErrTooLarge", limit, err)
		}
		want := fmt.Sprintf("index exceeds the maximum index file size of %d bytes", limit)
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	c := newClient(t, helmRepo(srv.URL()), Limits{MaxIndexSize: size})
	if _, _, err := c.FetchIndex(context.Background(), Previous{}); err != nil {
		t.Errorf("index of exactly the limit: %v", err)
	}
}

func TestFetchIndexErrors(t *testing.T) {
	tests := []struct {
		name    string
		index   string
		repoURL func(*helmserver.Server) string
		kind    error
		msg     string
	}{
		{name: "not yaml", index: "{{{not: an index", kind: ErrInvalidIndex, msg: "failed to load Helm repository from index YAML"},
		{name: "no apiVersion", index: "entries: {}\n", kind: ErrInvalidIndex, msg: "no API version specified"},
		{name: "empty", index: "", kind: ErrInvalidIndex, msg: "empty"},
		{name: "missing", repoURL: func(s *helmserver.Server) string { return s.URL() + "/nothing-here" }, kind: ErrNotFound, msg: "404 Not Found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := helmserver.New(t, helmserver.Options{})
			srv.WriteFile(t, "index.yaml", []byte(tt.index))
			u := srv.URL()
			if tt.repoURL != nil {
				u = tt.repoURL(srv)
			}
			_, _, err := newClient(t, helmRepo(u), Limits{}).FetchIndex(context.Background(), Previous{})
			if !errors.Is(err, tt.kind) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %v containing %q", err, tt.kind, tt.msg)
			}
			if strings.Contains(err.Error(), os.TempDir()) {
				t.Errorf("message names a temporary file: %v", err)
			}
		})
	}
}

func TestWrongCredentialsNeverInMessages(t *testing.T) {
	srv := helmserver.New(t, helmserver.Options{Username: user, Password: password})
	const wrong = "wr0ng-pa55word-value"
	c := newClient(t, helmRepo(srv.URL(), withSecret("auth")), Limits{},
		secret("auth", map[string]string{UsernameKey: user, PasswordKey: wrong}))
	_, _, err := c.FetchIndex(context.Background(), Previous{})
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "401 Unauthorized") {
		t.Fatalf("err = %v, want ErrAuth with 401", err)
	}
	_, err = c.DownloadChart(context.Background(), srv.URL()+"/podinfo-1.0.0.tgz", 0)
	for _, text := range []string{err.Error(), fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c)} {
		if strings.Contains(text, wrong) || strings.Contains(text, password) {
			t.Errorf("a secret leaked into %q", text)
		}
	}
}

func TestDownloadChartCredentialsStayOnRepositoryHost(t *testing.T) {
	repoSrv := helmserver.New(t, helmserver.Options{Username: user, Password: password})
	own := repoSrv.AddChart(t, helmserver.NewChart("podinfo", "6.0.0", "6.0.0"))
	other := helmserver.New(t, helmserver.Options{})
	elsewhere := other.AddChart(t, helmserver.NewChart("podinfo", "6.1.0", "6.1.0"))
	auth := secret("auth", map[string]string{UsernameKey: user, PasswordKey: password})

	for _, pass := range []bool{false, true} {
		t.Run(fmt.Sprintf("passCredentials=%v", pass), func(t *testing.T) {
			c := newClient(t, helmRepo(repoSrv.URL(), withSecret("auth"), func(r *sourcev1.HelmRepository) {
				r.Spec.PassCredentials = pass
			}), Limits{}, auth)
			if _, err := c.DownloadChart(context.Background(), own, 0); err != nil {
				t.Fatalf("chart on the repository host: %v", err)
			}
			before := len(other.Requests(""))
			data, err := c.DownloadChart(context.Background(), elsewhere, 0)
			if err != nil || len(data) == 0 {
				t.Fatalf("chart on another host: %d bytes, %v", len(data), err)
			}
			reqs := other.Requests("")[before:]
			if len(reqs) != 1 || reqs[0].Authorization != pass {
				t.Errorf("other host got %+v, want one request with Authorization=%v", reqs, pass)
			}
		})
	}
}

func TestDownloadChart(t *testing.T) {
	srv := helmserver.New(t, helmserver.Options{})
	abs := srv.AddChart(t, helmserver.NewChart("podinfo", "6.0.0", "6.0.0"))
	want := srv.Get(t, "/podinfo-6.0.0.tgz")
	c := newClient(t, helmRepo(srv.URL()+"/"), Limits{})
	for _, u := range []string{abs, "podinfo-6.0.0.tgz", "./podinfo-6.0.0.tgz"} {
		got, err := c.DownloadChart(context.Background(), u, 0)
		if err != nil || string(got) != string(want) {
			t.Errorf("DownloadChart(%q) = %d bytes, %v; want %d bytes", u, len(got), err, len(want))
		}
	}
	if _, err := c.DownloadChart(context.Background(), "podinfo-6.0.0.tgz", int64(len(want)-1)); !errors.Is(err, ErrTooLarge) ||
		!strings.Contains(err.Error(), "exceeds the maximum chart size") {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := c.DownloadChart(context.Background(), "missing-1.0.0.tgz", 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing chart: %v", err)
	}
	if _, err := c.DownloadChart(context.Background(), "", 0); !errors.Is(err, ErrInvalidURL) {
		t.Errorf("empty URL: %v", err)
	}
}

func TestTLS(t *testing.T) {
	srv := helmserver.New(t, helmserver.Options{TLS: true})
	srv.AddChart(t, helmserver.NewChart("podinfo", "6.0.0", "6.0.0"))
	ca := string(srv.CAPEM())
	tests := []struct {
		name   string
		repo   *sourcev1.HelmRepository
		secret *corev1.Secret
		ok     bool
	}{
		{name: "certSecretRef ca.crt", repo: helmRepo(srv.URL(), withCertSecret("tls")), secret: secret("tls", map[string]string{"ca.crt": ca}), ok: true},
		{name: "certSecretRef legacy caFile", repo: helmRepo(srv.URL(), withCertSecret("tls")), secret: secret("tls", map[string]string{LegacyCAKey: ca}), ok: true},
		{name: "secretRef legacy caFile (deprecated)", repo: helmRepo(srv.URL(), withSecret("tls")), secret: secret("tls", map[string]string{LegacyCAKey: ca}), ok: true},
		{name: "no CA", repo: helmRepo(srv.URL()), secret: secret("unused", nil), ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, tt.repo, Limits{}, tt.secret)
			_, _, err := c.FetchIndex(context.Background(), Previous{})
			if tt.ok && err != nil {
				t.Fatalf("FetchIndex: %v", err)
			}
			if !tt.ok && !errors.Is(err, ErrFetch) {
				t.Fatalf("FetchIndex = %v, want a TLS failure", err)
			}
		})
	}
}

func TestNewClientErrors(t *testing.T) {
	tests := []struct {
		name string
		repo *sourcev1.HelmRepository
		objs []client.Object
		kind error
		msg  string
	}{
		{name: "oci URL on default type", repo: helmRepo("oci://ghcr.io/stefanprodan/charts"), kind: ErrInvalidURL,
			msg: "'oci' URL scheme cannot be used with 'default' HelmRepository type"},
		{name: "http URL on oci type", repo: helmRepo("https://example.com", func(r *sourcev1.HelmRepository) { r.Spec.Type = sourcev1.HelmRepositoryTypeOCI }),
			kind: ErrInvalidURL, msg: "is not an oci:// URL"},
		{name: "userinfo in URL", repo: helmRepo("https://u:p@example.com"), kind: ErrInvalidURL, msg: "credentials belong in spec.secretRef"},
		{name: "no host", repo: helmRepo("https:///charts"), kind: ErrInvalidURL, msg: "has no host"},
		{name: "missing secret", repo: helmRepo("https://example.com", withSecret("nope")), kind: ErrAuth,
			msg: "failed to get authentication secret 'apps/nope'"},
		{name: "missing cert secret", repo: helmRepo("https://example.com", withCertSecret("nope")), kind: ErrAuth,
			msg: "failed to get TLS authentication secret 'apps/nope'"},
		{name: "username without password", repo: helmRepo("https://example.com", withSecret("auth")),
			objs: []client.Object{secret("auth", map[string]string{UsernameKey: user})}, kind: ErrAuth, msg: "'password' is missing"},
		{name: "certificate without key", repo: helmRepo("https://example.com", withCertSecret("tls")),
			objs: []client.Object{secret("tls", map[string]string{"tls.crt": "x"})}, kind: ErrAuth, msg: "failed to construct Helm client's TLS config"},
		{name: "provider aws, not an ECR host", repo: helmRepo("oci://ghcr.io/charts", func(r *sourcev1.HelmRepository) {
			r.Spec.Type, r.Spec.Provider = sourcev1.HelmRepositoryTypeOCI, "aws"
		}), kind: ErrAuth, msg: "failed to get credential from 'aws': invalid AWS registry: 'ghcr.io'. must match "},
		{name: "provider gcp, not a GCP host", repo: helmRepo("oci://ghcr.io/charts", func(r *sourcev1.HelmRepository) {
			r.Spec.Type, r.Spec.Provider = sourcev1.HelmRepositoryTypeOCI, "gcp"
		}), kind: ErrAuth, msg: "failed to get credential from 'gcp': invalid GCP registry: 'ghcr.io'. must match "},
		{name: "provider azure, not an ACR host", repo: helmRepo("oci://ghcr.io/charts", func(r *sourcev1.HelmRepository) {
			r.Spec.Type, r.Spec.Provider = sourcev1.HelmRepositoryTypeOCI, "azure"
		}), kind: ErrAuth, msg: "failed to get credential from 'azure': invalid Azure registry: 'ghcr.io'. must match "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewClient(context.Background(), reader(tt.objs...), tt.repo, Limits{}, nil)
			if !errors.Is(err, tt.kind) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %v containing %q", err, tt.kind, tt.msg)
			}
		})
	}
}

func TestOCIOptions(t *testing.T) {
	oci := func(mutate ...func(*sourcev1.HelmRepository)) *sourcev1.HelmRepository {
		return helmRepo("oci://registry.example.com:5000/charts", append([]func(*sourcev1.HelmRepository){func(r *sourcev1.HelmRepository) {
			r.Spec.Type, r.Spec.Insecure = sourcev1.HelmRepositoryTypeOCI, true
		}}, mutate...)...)
	}
	dockerCfg := `{"auths":{"registry.example.com:5000":{"username":"docker-user","password":"` + password + `"}}}`
	tests := []struct {
		name     string
		secret   *corev1.Secret
		wantUser string
	}{
		{name: "basic auth", secret: secret("auth", map[string]string{UsernameKey: user, PasswordKey: password}), wantUser: user},
		{name: "dockerconfigjson", secret: secret("auth", map[string]string{".dockerconfigjson": dockerCfg}), wantUser: "docker-user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, oci(withSecret("auth")), Limits{}, tt.secret)
			o := c.OCIOptions()
			if !o.Insecure || o.Keychain == nil || !c.IsOCI() {
				t.Fatalf("options %+v", o)
			}
			if got := c.OCIChartURL("podinfo"); got != "oci://registry.example.com:5000/charts/podinfo" {
				t.Errorf("chart URL %s", got)
			}
			repoRef, _ := name.NewRepository("registry.example.com:5000/charts/podinfo")
			a, err := o.Keychain.Resolve(repoRef)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := a.Authorization()
			if err != nil || cfg.Username != tt.wantUser || cfg.Password != password {
				t.Errorf("login = %q, %v", cfg.Username, err)
			}
			if strings.Contains(fmt.Sprintf("%v %#v %v", c, c, o.Keychain), password) {
				t.Error("a printed client shows the password")
			}
			other, _ := name.NewRepository("elsewhere.example.com/charts/podinfo")
			if a, _ := o.Keychain.Resolve(other); tt.name == "basic auth" && a != authn.Anonymous {
				t.Error("basic-auth login offered to another registry")
			}
		})
	}
	if _, _, err := newClient(t, oci(), Limits{}).FetchIndex(context.Background(), Previous{}); !errors.Is(err, ErrInvalidURL) {
		t.Errorf("FetchIndex on OCI = %v", err)
	}
}

func TestLoadIndexFileReadsStoredJSON(t *testing.T) {
	srv := helmserver.New(t, helmserver.Options{})
	srv.AddChart(t, helmserver.NewChart("podinfo", "6.0.0", "6.0.0"))
	ix, _, err := newClient(t, helmRepo(srv.URL()), Limits{}).FetchIndex(context.Background(), Previous{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := MarshalJSON(ix.File)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "index.yaml")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	back, err := LoadIndexFile(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if cv, err := back.Get("podinfo", ""); err != nil || cv.Version != "6.0.0" || cv.Digest != ix.File.Entries["podinfo"][0].Digest {
		t.Errorf("reloaded %v, %v", cv, err)
	}
	if _, err := LoadIndexFile(p, int64(len(b)-1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the limit: %v", err)
	}

	c := NewCache(CacheOptions{MaxSize: 1})
	for i, wantHit := range []bool{false, true} {
		idx, hit, err := c.Load("helmrepository/apps/podinfo/index.yaml", p, 0)
		if err != nil || hit != wantHit || len(idx.Entries["podinfo"]) != 1 {
			t.Errorf("Load #%d = hit %v, %v", i, hit, err)
		}
	}
	var disabled *Cache
	if _, hit, err := disabled.Load("k", p, 0); hit || err != nil {
		t.Errorf("disabled Load = hit %v, %v", hit, err)
	}
}

func TestCache(t *testing.T) {
	if c := NewCache(CacheOptions{}); c != nil {
		t.Fatal("max size 0 should disable the cache")
	}
	var disabled *Cache
	disabled.Set("k", nil)
	if _, ok := disabled.Get("k"); ok || disabled.Len() != 0 {
		t.Fatal("a disabled cache returned something")
	}

	c := NewCache(CacheOptions{MaxSize: 2, TTL: time.Hour})
	a, b, d := repo.NewIndexFile(), repo.NewIndexFile(), repo.NewIndexFile()
	c.Set("a", a)
	c.Set("b", b)
	if got, ok := c.Get("a"); !ok || got != a {
		t.Fatal("a missing")
	}
	c.Set("d", d) // evicts b, the least recently used
	if _, ok := c.Get("b"); ok {
		t.Error("b survived past MaxSize")
	}
	if c.Len() != 2 {
		t.Errorf("len %d", c.Len())
	}

	short := NewCache(CacheOptions{MaxSize: 2, TTL: 20 * time.Millisecond})
	short.Set("a", a)
	time.Sleep(30 * time.Millisecond)
	short.Purge()
	if _, ok := short.Get("a"); ok || short.Len() != 0 {
		t.Error("expired index still served")
	}
}
