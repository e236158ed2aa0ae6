package containerimage_test

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/weir-gitops/weir/internal/devenv/testenv/ociregistry"
	"github.com/weir-gitops/weir/internal/install/containerimage"
)

func fakeBinary(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "weir-controller")
	if err := os.WriteFile(p, []byte("\x7fELF stand-in for a static binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBuildPushPull builds the image twice (same digest), pushes it to the
// in-process registry and reads it back as a container runtime would.
func TestBuildPushPull(t *testing.T) {
	bin := fakeBinary(t)
	certs := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(certs, []byte("-----BEGIN CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := containerimage.Options{Binary: bin, CACerts: certs, Version: "v1.2.3"}
	img, err := containerimage.Build(opts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := containerimage.Build(opts)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("two builds of the same inputs: %s and %s", d1, d2)
	}

	reg := ociregistry.New(t, ociregistry.Options{})
	ref := reg.Host() + "/weir-gitops/weir-controller:v1.2.3"
	digest, err := containerimage.Push(context.Background(), img, ref, nil)
	if err != nil {
		t.Fatal(err)
	}
	if digest != d1.String() {
		t.Errorf("pushed digest %s, built %s", digest, d1)
	}

	parsed, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Image(parsed)
	if err != nil {
		t.Fatal(err)
	}
	if mt, _ := pulled.MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %s", mt)
	}
	cfg, err := pulled.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "65534:65534" || len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/weir-controller" ||
		cfg.OS != "linux" || cfg.Architecture != "amd64" || cfg.Config.Labels["org.opencontainers.image.version"] != "v1.2.3" {
		t.Errorf("config: %+v", cfg)
	}
	files := map[string]*tar.Header{}
	rc := mutate.Extract(pulled)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = h
	}
	for name, mode := range map[string]int64{"weir-controller": 0o755, "etc/passwd": 0o644, "etc/ssl/certs/ca-certificates.crt": 0o644} {
		h, ok := files[name]
		if !ok {
			t.Errorf("%s missing from the image", name)
			continue
		}
		if h.Mode&0o7777 != mode || h.Uid != 0 {
			t.Errorf("%s: mode %o uid %d", name, h.Mode, h.Uid)
		}
	}
}

func TestWriteTarball(t *testing.T) {
	img, err := containerimage.Build(containerimage.Options{Binary: fakeBinary(t), Version: "v0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "image.tar")
	if err := containerimage.WriteTarball(img, "ghcr.io/weir-gitops/weir-controller:v0.1.0", out); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Errorf("tarball: %v", err)
	}
}
