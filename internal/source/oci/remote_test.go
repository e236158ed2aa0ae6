package oci

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

const fluxLayer = sourcev1.OCIArtifactLayerMediaType

func openRemote(t *testing.T, url string, opts Options) Remote {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	r, err := NewClient().Remote(ctx, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestResolveMakesNoDownloads(t *testing.T) {
	reg := ociregistry.New(t, ociregistry.Options{})
	pushA := func(tag, content string) string {
		return reg.PushArtifact(t, "org/app", tag, ociregistry.Artifact{Files: map[string]string{"a.yaml": content}})
	}
	d100 := pushA("v1.0.0", "1.0.0")
	d120 := pushA("v1.2.0", "1.2.0")
	drc := pushA("1.3.0-rc.1", "rc")
	pushA("2.0.0", "2.0.0")
	dlatest := pushA("latest", "latest")
	host, log := ociregistry.CountingProxy(t, reg.URL())
	r := openRemote(t, "oci://"+host+"/org/app", Options{})

	tests := []struct {
		name string
		ref  Reference
		want string
	}{
		{"default tag", Reference{}, "latest@" + dlatest},
		{"tag", Reference{Tag: "v1.0.0"}, "v1.0.0@" + d100},
		{"semver", Reference{SemVer: ">=1.0.0 <2.0.0"}, "v1.2.0@" + d120},
		{"semver with filter", Reference{SemVer: ">=1.0.0-0", SemverFilter: "-rc"}, "1.3.0-rc.1@" + drc},
		{"semver beats tag", Reference{SemVer: "1.0.x", Tag: "latest"}, "v1.0.0@" + d100},
		{"digest beats all", Reference{Digest: d120, SemVer: ">=2.0.0", Tag: "latest"}, d120},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := r.Resolve(tt.ref)
			if err != nil {
				t.Fatal(err)
			}
			if res.Revision != tt.want {
				t.Errorf("revision = %s, want %s", res.Revision, tt.want)
			}
		})
	}
	if n := log.Count(http.MethodGet, "/manifests/") + log.Count(http.MethodGet, "/blobs/"); n != 0 {
		t.Errorf("resolving downloaded %d manifests or blobs; requests: %v", n, log)
	}
	if n := log.Count(http.MethodHead, "/manifests/"); n != 5 {
		t.Errorf("%d manifest HEADs for 5 tag and semver references, want 5", n)
	}
}

func TestResolveNotFound(t *testing.T) {
	reg := ociregistry.New(t, ociregistry.Options{})
	reg.PushArtifact(t, "org/app", "v1.0.0", ociregistry.Artifact{Files: map[string]string{"a": "a"}})
	r := openRemote(t, "oci://"+reg.Host()+"/org/app", Options{})
	missing := openRemote(t, "oci://"+reg.Host()+"/org/missing", Options{})

	tests := []struct {
		name    string
		remote  Remote
		ref     Reference
		wantMsg string
		tagErr  bool
	}{
		{"missing tag", r, Reference{Tag: "v9.9.9"}, "tag 'v9.9.9' not found in '" + reg.Host() + "/org/app'", false},
		{"no semver match", r, Reference{SemVer: ">=2.0.0"}, "tag matching semver '>=2.0.0' not found in '" + reg.Host() + "/org/app'", true},
		{"filter excludes all", r, Reference{SemVer: ">=1.0.0", SemverFilter: "^release-"}, "tag matching semver '>=1.0.0' and semverFilter '^release-' not found", true},
		{"missing repository, semver", missing, Reference{SemVer: ">=1.0.0"}, "repository '" + reg.Host() + "/org/missing' not found", true},
		{"missing repository, tag", missing, Reference{Tag: "v1.0.0"}, "tag 'v1.0.0' not found", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.remote.Resolve(tt.ref)
			if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("Resolve error = %v, want ErrNotFound %q", err, tt.wantMsg)
			}
			var te *TagError
			if errors.As(err, &te) != tt.tagErr {
				t.Errorf("TagError = %v, want %v", !tt.tagErr, tt.tagErr)
			}
		})
	}
}

func TestPullExtractAndCopy(t *testing.T) {
	reg := ociregistry.New(t, ociregistry.Options{})
	files := map[string]string{"deploy/app.yaml": "kind: ConfigMap\n", "README.md": "hi\n"}
	content := tarGz(t, entry{name: "deploy/app.yaml", body: files["deploy/app.yaml"]}, entry{name: "README.md", body: files["README.md"]})
	annotations := map[string]string{
		SourceAnnotation:   "https://github.com/org/app",
		RevisionAnnotation: "main@sha1:0123456789abcdef0123456789abcdef01234567",
		CreatedAnnotation:  "2025-01-01T00:00:00Z",
	}
	other := tarGz(t, entry{name: "chart/Chart.yaml", body: "name: app\n"})
	const helmLayer = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	digest := push(t, reg.Host(), "org/app", "v1", image(t, annotations,
		layer{mediaType: fluxLayer, data: content}, layer{mediaType: helmLayer, data: other}))
	host, log := ociregistry.CountingProxy(t, reg.URL())
	r := openRemote(t, "oci://"+host+"/org/app", Options{})
	res, err := r.Resolve(Reference{Tag: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Digest != digest || res.Revision != "v1@"+digest {
		t.Fatalf("resolved %+v, pushed %s", res, digest)
	}

	t.Run("extract", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		pulled, err := r.Pull(res, dir, PullOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(files, readTree(t, dir)); diff != "" {
			t.Errorf("extracted files (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(annotations, pulled.Annotations); diff != "" {
			t.Errorf("annotations (-want +got):\n%s", diff)
		}
		if pulled.MediaType != fluxLayer || pulled.Size != int64(len(content)) {
			t.Errorf("pulled layer %s of %d bytes", pulled.MediaType, pulled.Size)
		}
	})
	t.Run("copy selected layer", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "layer.tgz")
		pulled, err := r.Pull(res, dst, PullOptions{MediaType: helmLayer, Copy: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(dst)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(got)
		if string(got) != string(other) || pulled.Digest != "sha256:"+hex.EncodeToString(sum[:]) {
			t.Errorf("copied %d bytes with digest %x, layer %s", len(got), sum, pulled.Digest)
		}
	})
	t.Run("extract selected layer", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := r.Pull(res, dir, PullOptions{MediaType: helmLayer}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]string{"chart/Chart.yaml": "name: app\n"}, readTree(t, dir)); diff != "" {
			t.Errorf("extracted files (-want +got):\n%s", diff)
		}
	})
	t.Run("no layer with the media type", func(t *testing.T) {
		_, err := r.Pull(res, t.TempDir(), PullOptions{MediaType: "application/x-none"})
		if !errors.Is(err, ErrLayer) || err.Error() != "failed to find layer with media type 'application/x-none' in artifact" {
			t.Errorf("Pull error = %v", err)
		}
	})
	t.Run("copy larger than the limit", func(t *testing.T) {
		_, err := r.Pull(res, filepath.Join(t.TempDir(), "x"), PullOptions{Copy: true, MaxSize: 10})
		if !errors.Is(err, ErrLayer) || !strings.Contains(err.Error(), "exceeds the limit of 10 bytes") {
			t.Errorf("Pull error = %v", err)
		}
	})
	// The manifest is fetched by digest, never by tag: what is stored is
	// what the revision names even if the tag moves.
	if n := log.Count(http.MethodGet, "/manifests/v1"); n != 0 {
		t.Errorf("Pull fetched the manifest by tag %d times", n)
	}
}

func TestPullRejectsHostileLayers(t *testing.T) {
	reg := ociregistry.New(t, ociregistry.Options{})
	tests := []struct {
		name    string
		entries []entry
		max     int64
		want    error
	}{
		{"parent directory", []entry{{name: "ok.yaml", body: "a"}, {name: "../escaped", body: "pwned"}}, 0, artifact.ErrUnsafeEntry},
		{"deep parent", []entry{{name: "a/../../escaped", body: "pwned"}}, 0, artifact.ErrUnsafeEntry},
		{"absolute path", []entry{{name: "/tmp/escaped", body: "pwned"}}, 0, artifact.ErrUnsafeEntry},
		{"write through a symlink", []entry{{name: "link", typ: '2', link: ".."}, {name: "link/escaped", body: "pwned"}}, 0, artifact.ErrUnsafeEntry},
		{"symlink out", []entry{{name: "escaped", typ: '2', link: "../../etc/passwd"}}, 0, artifact.ErrUnsafeEntry},
		{"too large", []entry{{name: "big", body: strings.Repeat("x", 4096)}}, 1024, artifact.ErrArchiveTooLarge},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := "hostile/" + string(rune('a'+i))
			push(t, reg.Host(), repo, "latest", image(t, nil, layer{mediaType: fluxLayer, data: tarGz(t, tt.entries...)}))
			r := openRemote(t, "oci://"+reg.Host()+"/"+repo, Options{})
			res, err := r.Resolve(Reference{})
			if err != nil {
				t.Fatal(err)
			}
			parent := t.TempDir()
			dir := filepath.Join(parent, "a", "out")
			_, err = r.Pull(res, dir, PullOptions{MaxSize: tt.max})
			if !errors.Is(err, ErrLayer) || !errors.Is(err, tt.want) {
				t.Fatalf("Pull error = %v, want ErrLayer and %v", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "failed to extract layer contents from artifact: ") {
				t.Errorf("message %q", err)
			}
			for _, p := range []string{filepath.Join(parent, "escaped"), filepath.Join(parent, "a", "escaped"), "/tmp/escaped"} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s was written outside the extraction directory", p)
				}
			}
		})
	}
	t.Run("not a tarball", func(t *testing.T) {
		push(t, reg.Host(), "hostile/plain", "latest", image(t, nil, layer{mediaType: fluxLayer, data: []byte("just text, not a tar stream at all; just text")}))
		r := openRemote(t, "oci://"+reg.Host()+"/hostile/plain", Options{})
		res, err := r.Resolve(Reference{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Pull(res, t.TempDir(), PullOptions{}); !errors.Is(err, ErrLayer) {
			t.Errorf("Pull error = %v, want ErrLayer", err)
		}
	})
}

func TestRegistryAuth(t *testing.T) {
	reg := ociregistry.New(t, ociregistry.Options{Username: "bot", Password: "right-pass"})
	digest := reg.PushArtifact(t, "org/app", "v1", ociregistry.Artifact{Files: map[string]string{"a": "a"}})
	reg.PushArtifact(t, "org/app", "1.0.0", ociregistry.Artifact{Files: map[string]string{"a": "a"}})
	keychain := func(pass string) *Keychain {
		k, err := NewKeychain(dockerConfig(map[string]string{reg.Host(): "bot:" + pass}))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	tests := []struct {
		name    string
		opts    Options
		wantErr error
	}{
		{"right credentials", Options{Keychain: keychain("right-pass")}, nil},
		{"wrong password", Options{Keychain: keychain("wrong-pass")}, ErrAuth},
		{"anonymous", Options{}, ErrAuth},
		{"credentials for another registry", Options{Keychain: mustKeychain(t, dockerConfig(map[string]string{"ghcr.io": "bot:right-pass"}))}, ErrAuth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := openRemote(t, "oci://"+reg.Host()+"/org/app", tt.opts)
			for _, ref := range []Reference{{Tag: "v1"}, {SemVer: ">=1.0.0"}} {
				res, err := r.Resolve(ref)
				if tt.wantErr == nil {
					if err != nil {
						t.Fatal(err)
					}
					if res.Digest != digest {
						t.Errorf("digest %s, pushed %s", res.Digest, digest)
					}
					continue
				}
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Resolve(%+v) error = %v, want %v", ref, err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "pass") {
					t.Errorf("error leaks the password: %v", err)
				}
			}
		})
	}
	t.Run("pull with credentials", func(t *testing.T) {
		r := openRemote(t, "oci://"+reg.Host()+"/org/app", Options{Keychain: keychain("right-pass")})
		if _, err := r.Pull(&Resolved{Digest: digest, Ref: "x"}, t.TempDir(), PullOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}

func mustKeychain(t *testing.T, data map[string][]byte) *Keychain {
	t.Helper()
	k, err := NewKeychain(data)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestUnreachable(t *testing.T) {
	r := openRemote(t, "oci://127.0.0.1:1/org/app", Options{})
	_, err := r.Resolve(Reference{Tag: "v1"})
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("Resolve error = %v, want ErrUnreachable naming the address", err)
	}
}

func TestNewTransport(t *testing.T) {
	tr := func(o Options) *http.Transport { return NewTransport(o).(*http.Transport) }
	if c := tr(Options{}).TLSClientConfig; c != nil && c.InsecureSkipVerify {
		t.Error("default transport skips TLS verification")
	}
	if c := tr(Options{Insecure: true}).TLSClientConfig; c == nil || !c.InsecureSkipVerify {
		t.Error("insecure without a certificate Secret verifies TLS; Flux does not")
	}
	cfg, err := NewTLSConfig(map[string][]byte{CAKey: selfSignedCA(t)})
	if err != nil || cfg == nil || cfg.RootCAs == nil {
		t.Fatalf("NewTLSConfig = %v, %v", cfg, err)
	}
	if c := tr(Options{Insecure: true, TLS: cfg}).TLSClientConfig; c == nil || c.InsecureSkipVerify || c.RootCAs == nil {
		t.Error("a certificate Secret must be used, and verified, even with insecure")
	}
	proxy, err := NewProxyURL(map[string][]byte{"address": []byte("http://proxy:3128")})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "https://ghcr.io/v2/", nil)
	if got, err := tr(Options{Proxy: proxy}).Proxy(req); err != nil || got.String() != "http://proxy:3128" {
		t.Errorf("proxy = %v, %v", got, err)
	}
}

// selfSignedCA returns a PEM CA certificate.
func selfSignedCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "weir test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
