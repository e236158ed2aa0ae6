package ociregistry_test

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
)

func TestPushAndPullArtifact(t *testing.T) {
	reg := ociregistry.New(t, ociregistry.Options{})
	files := map[string]string{
		"app.yaml":        "kind: ConfigMap\n",
		"base/patch.yaml": "kind: Deployment\n",
	}
	digest := reg.PushArtifact(t, "org/manifests", "v1.0.0", ociregistry.Artifact{
		Files:    files,
		Source:   "https://github.com/org/app",
		Revision: "main@sha1:0123abcd",
	})

	ref, err := name.ParseReference(reg.Host() + "/org/manifests:v1.0.0")
	if err != nil {
		t.Fatalf("parse reference: %v", err)
	}
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatalf("pull: %v", err)
	}
	gotDigest, err := img.Digest()
	if err != nil {
		t.Fatalf("digest: %v", err)
	}
	if gotDigest.String() != digest {
		t.Errorf("pulled digest %s, pushed %s", gotDigest, digest)
	}

	manifest, err := img.Manifest()
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	if got := string(manifest.Config.MediaType); got != sourcev1.OCIArtifactConfigMediaType {
		t.Errorf("config media type = %s, want %s", got, sourcev1.OCIArtifactConfigMediaType)
	}
	if len(manifest.Layers) != 1 {
		t.Fatalf("got %d layers, want 1", len(manifest.Layers))
	}
	if got := string(manifest.Layers[0].MediaType); got != sourcev1.OCIArtifactLayerMediaType {
		t.Errorf("layer media type = %s, want %s", got, sourcev1.OCIArtifactLayerMediaType)
	}
	wantAnnotations := map[string]string{
		"org.opencontainers.image.source":   "https://github.com/org/app",
		"org.opencontainers.image.revision": "main@sha1:0123abcd",
	}
	if diff := cmp.Diff(wantAnnotations, manifest.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}

	layers, err := img.Layers()
	if err != nil {
		t.Fatalf("layers: %v", err)
	}
	rc, err := layers[0].Compressed()
	if err != nil {
		t.Fatalf("open layer: %v", err)
	}
	defer rc.Close()
	if diff := cmp.Diff(files, untar(t, rc)); diff != "" {
		t.Errorf("layer files (-want +got):\n%s", diff)
	}
}

func TestSamePushSameDigest(t *testing.T) {
	reg := ociregistry.New(t, ociregistry.Options{})
	a := ociregistry.Artifact{Files: map[string]string{"a.yaml": "a"}, Source: "s", Revision: "r"}
	first := reg.PushArtifact(t, "app", "v1", a)
	second := reg.PushArtifact(t, "app", "v2", a)
	if first != second {
		t.Errorf("same artifact pushed twice got digests %s and %s", first, second)
	}
}

func TestBasicAuth(t *testing.T) {
	reg := ociregistry.New(t, ociregistry.Options{Username: "user", Password: "pass"})
	reg.PushArtifact(t, "org/manifests", "latest", ociregistry.Artifact{Files: map[string]string{"a": "a"}})
	ref, err := name.ParseReference(reg.Host() + "/org/manifests:latest")
	if err != nil {
		t.Fatalf("parse reference: %v", err)
	}

	tests := []struct {
		name       string
		auth       authn.Authenticator
		wantStatus int // 0: the pull succeeds
	}{
		{name: "right credentials", auth: &authn.Basic{Username: "user", Password: "pass"}},
		{name: "anonymous", auth: authn.Anonymous, wantStatus: http.StatusUnauthorized},
		{name: "wrong password", auth: &authn.Basic{Username: "user", Password: "nope"}, wantStatus: http.StatusUnauthorized},
		{name: "unknown user", auth: &authn.Basic{Username: "eve", Password: "pass"}, wantStatus: http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := remote.Image(ref, remote.WithAuth(tt.auth))
			if tt.wantStatus == 0 {
				if err != nil {
					t.Fatalf("pull: %v", err)
				}
				return
			}
			var terr *transport.Error
			if !errors.As(err, &terr) || terr.StatusCode != tt.wantStatus {
				t.Fatalf("pull error = %v, want HTTP %d", err, tt.wantStatus)
			}
		})
	}

	t.Run("challenge", func(t *testing.T) {
		resp, err := http.Get(reg.URL() + "/v2/")
		if err != nil {
			t.Fatalf("get /v2/: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("GET /v2/ = %d with WWW-Authenticate %q, want 401 with a Basic challenge",
				resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	})
}

func untar(t *testing.T, r io.Reader) map[string]string {
	t.Helper()
	gz, err := gzip.NewReader(r)
	if err != nil {
		t.Fatalf("gunzip layer: %v", err)
	}
	tr := tar.NewReader(gz)
	files := map[string]string{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatalf("read tar: %v", err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("read %s: %v", hdr.Name, err)
		}
		files[hdr.Name] = string(b)
	}
}
