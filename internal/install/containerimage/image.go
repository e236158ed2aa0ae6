package containerimage

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// User is the numeric user and group the controller runs as: nobody.
const User = "65534:65534"

// Entrypoint is where the binary sits in the image.
const Entrypoint = "/weir-controller"

// Options are the inputs of Build.
type Options struct {
	// Binary is the path of a statically linked weir-controller for OS/Arch.
	Binary string
	// CACerts is the path of a PEM bundle copied to
	// /etc/ssl/certs/ca-certificates.crt, where Go looks first; empty
	// leaves it out (the controller then trusts no public CA).
	CACerts string
	// Version is recorded in the org.opencontainers.image.version label.
	Version string
	// OS and Arch of the binary; default linux/amd64.
	OS, Arch string
	// Created is the image's creation time and every file's modification
	// time; the zero value is the Unix epoch, so builds are reproducible.
	Created time.Time
}

// Build returns the image.
func Build(opts Options) (v1.Image, error) {
	if opts.OS == "" {
		opts.OS = "linux"
	}
	if opts.Arch == "" {
		opts.Arch = "amd64"
	}
	if opts.Created.IsZero() {
		opts.Created = time.Unix(0, 0).UTC()
	}
	files, err := layerFiles(opts)
	if err != nil {
		return nil, err
	}
	data, err := tarFiles(files, opts.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("building layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.AppendLayers(img, layer)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = opts.OS, opts.Arch
	cfg.Created = v1.Time{Time: opts.Created}
	cfg.Config = v1.Config{
		User:       User,
		Entrypoint: []string{Entrypoint},
		WorkingDir: "/",
		Env:        []string{"PATH=/"},
		Labels: map[string]string{
			"org.opencontainers.image.title":   "weir-controller",
			"org.opencontainers.image.source":  "https://github.com/weir-gitops/weir",
			"org.opencontainers.image.version": opts.Version,
		},
	}
	return mutate.ConfigFile(img, cfg)
}

type file struct {
	name string
	mode int64
	data []byte
	dir  bool
}

func layerFiles(opts Options) ([]file, error) {
	bin, err := os.ReadFile(opts.Binary)
	if err != nil {
		return nil, fmt.Errorf("reading the controller binary: %w", err)
	}
	files := []file{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnogroup:x:65534:\n")},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n")},
	}
	if opts.CACerts != "" {
		certs, err := os.ReadFile(opts.CACerts)
		if err != nil {
			return nil, fmt.Errorf("reading the CA bundle: %w", err)
		}
		files = append(files,
			file{name: "etc/ssl/", mode: 0o755, dir: true},
			file{name: "etc/ssl/certs/", mode: 0o755, dir: true},
			file{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: certs})
	}
	return append(files,
		file{name: "tmp/", mode: 0o1777, dir: true},
		file{name: Entrypoint[1:], mode: 0o755, data: bin}), nil
}

func tarFiles(files []file, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, ModTime: mtime, Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(f.data))}
		if f.dir {
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Push writes img to ref ("host/repo:tag") and returns its digest. A nil
// auth uses the credentials of ~/.docker/config.json, if any. Plain HTTP is
// used for registries on loopback addresses and localhost, as docker does.
func Push(ctx context.Context, img v1.Image, ref string, auth authn.Authenticator) (string, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", fmt.Errorf("parsing %q: %w", ref, err)
	}
	creds := remote.WithAuthFromKeychain(authn.DefaultKeychain)
	if auth != nil {
		creds = remote.WithAuth(auth)
	}
	if err := remote.Write(r, img, remote.WithContext(ctx), creds); err != nil {
		return "", fmt.Errorf("pushing %s: %w", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	return d.String(), nil
}

// WriteTarball writes img to path as a tarball `docker load` and
// `crane push` read, tagged ref.
func WriteTarball(img v1.Image, ref, path string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("parsing %q: %w", ref, err)
	}
	return tarball.WriteToFile(path, tag, img)
}
