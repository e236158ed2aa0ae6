package oci

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// ReproducibleTime is the created annotation of a reproducible push, so two
// pushes of the same files give one digest.
var ReproducibleTime = time.Unix(0, 0).UTC()

// ParseArtifactURL reads oci://host/repo:tag or oci://host/repo@sha256:…, the
// references `push|pull|tag artifact` take.
func ParseArtifactURL(rawURL string, insecure bool) (name.Reference, error) {
	rest, ok := strings.CutPrefix(rawURL, URLPrefix)
	if !ok {
		return nil, invalidf("URL must be in format 'oci://<domain>/<org>/<repo>:<tag>'")
	}
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	ref, err := name.ParseReference(rest, opts...)
	if err != nil {
		return nil, invalidf("invalid URL %q: %v", rawURL, err)
	}
	return ref, nil
}

// RemoteOptions are go-containerregistry's options for a CLI call: basic
// auth from creds ("user:password") or, without creds, the docker config
// keychain, as the flux CLI does.
func RemoteOptions(ctx context.Context, creds string) ([]remote.Option, error) {
	opts := []remote.Option{remote.WithContext(ctx)}
	if creds == "" {
		return append(opts, remote.WithAuthFromKeychain(authn.DefaultKeychain)), nil
	}
	user, pass, ok := strings.Cut(creds, ":")
	if !ok || user == "" {
		return nil, invalidf("invalid credentials: expected 'username:password'")
	}
	return append(opts, remote.WithAuth(&authn.Basic{Username: user, Password: pass})), nil
}

// BuildOptions say what to pack.
type BuildOptions struct {
	// IgnorePaths are .gitignore-style rules applied after .sourceignore.
	IgnorePaths []string
}

// BuildTarball packs path (a directory, or one file placed at the archive
// root) as the gzipped tarball of a Flux artifact's single layer. Entries are
// in path order with fixed times and modes, so the same files give the same
// bytes.
func BuildTarball(ctx context.Context, path string, o BuildOptions) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("invalid path %q: %w", path, err)
	}
	dir := path
	if !fi.IsDir() {
		tmp, err := os.MkdirTemp("", "weir-artifact-")
		if err != nil {
			return nil, fmt.Errorf("packing %s: %w", path, err)
		}
		defer os.RemoveAll(tmp)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		if err := os.WriteFile(filepath.Join(tmp, filepath.Base(path)), data, fi.Mode().Perm()); err != nil {
			return nil, fmt.Errorf("packing %s: %w", path, err)
		}
		dir = tmp
	}
	var ignore *string
	if len(o.IgnorePaths) > 0 {
		s := strings.Join(o.IgnorePaths, "\n")
		ignore = &s
	}
	filter, err := artifact.NewFilter(dir, ignore)
	if err != nil {
		return nil, fmt.Errorf("packing %s: %w", path, err)
	}
	var buf bytes.Buffer
	if _, err := artifact.WriteArchive(ctx, &buf, dir, artifact.ArchiveOptions{Filter: filter}); err != nil {
		return nil, fmt.Errorf("packing %s: %w", path, err)
	}
	return buf.Bytes(), nil
}

// Metadata is what a Flux artifact's manifest annotations carry.
type Metadata struct {
	Source, Revision string
	Created          time.Time
	// Annotations are extra manifest annotations (--annotations).
	Annotations map[string]string
}

// ArtifactImage is the OCI image Flux pushes: an OCI manifest, Flux's config
// media type, one layer holding content, and the source/revision/created
// annotations.
func ArtifactImage(content []byte, m Metadata) (v1.Image, error) {
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(content)), nil
	}, tarball.WithMediaType(sourcev1.OCIArtifactLayerMediaType))
	if err != nil {
		return nil, fmt.Errorf("building layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, sourcev1.OCIArtifactConfigMediaType)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer})
	if err != nil {
		return nil, fmt.Errorf("appending layer: %w", err)
	}
	ann := map[string]string{}
	for k, v := range m.Annotations {
		ann[k] = v
	}
	if m.Source != "" {
		ann[ocispec.AnnotationSource] = m.Source
	}
	if m.Revision != "" {
		ann[ocispec.AnnotationRevision] = m.Revision
	}
	ann[ocispec.AnnotationCreated] = m.Created.UTC().Format(time.RFC3339)
	return mutate.Annotations(img, ann).(v1.Image), nil
}

// FetchedArtifact is an artifact's manifest as FetchArtifact read it.
type FetchedArtifact struct {
	// Digest is the manifest digest ("sha256:…").
	Digest   string
	Metadata Metadata
	layer    v1.Layer
}

// FetchArtifact reads the manifest of ref and picks its Flux content layer
// (or its only layer when none has Flux's media type).
func FetchArtifact(ref name.Reference, opts ...remote.Option) (*FetchedArtifact, error) {
	img, err := remote.Image(ref, opts...)
	if err != nil {
		return nil, fmt.Errorf("pulling artifact from %s: %w", ref.String(), err)
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, fmt.Errorf("reading the manifest of %s: %w", ref.String(), err)
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, fmt.Errorf("computing the digest of %s: %w", ref.String(), err)
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("reading the layers of %s: %w", ref.String(), err)
	}
	if len(layers) == 0 {
		return nil, layerf("artifact %s has no layers", ref.String())
	}
	layer := layers[0]
	for i, d := range m.Layers {
		if string(d.MediaType) == sourcev1.OCIArtifactLayerMediaType {
			layer = layers[i]
			break
		}
	}
	a := &FetchedArtifact{Digest: digest.String(), layer: layer, Metadata: Metadata{
		Source:      m.Annotations[ocispec.AnnotationSource],
		Revision:    m.Annotations[ocispec.AnnotationRevision],
		Annotations: m.Annotations,
	}}
	if t, err := time.Parse(time.RFC3339, m.Annotations[ocispec.AnnotationCreated]); err == nil {
		a.Metadata.Created = t
	}
	return a, nil
}

// Extract writes the content layer into dir with artifact.Untar: bounded in
// size, no entry escaping dir.
func (a *FetchedArtifact) Extract(dir string) error {
	rc, err := a.layer.Compressed()
	if err != nil {
		return fmt.Errorf("downloading the content layer: %w", err)
	}
	defer rc.Close()
	if err := artifact.Untar(rc, dir, artifact.DefaultMaxArchiveSize); err != nil {
		return fmt.Errorf("extracting the content layer: %w", err)
	}
	return nil
}

// Content returns the content layer's compressed bytes.
func (a *FetchedArtifact) Content() ([]byte, error) {
	rc, err := a.layer.Compressed()
	if err != nil {
		return nil, fmt.Errorf("downloading the content layer: %w", err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, artifact.DefaultMaxArtifactSize+1))
	if err != nil {
		return nil, fmt.Errorf("downloading the content layer: %w", err)
	}
	if int64(len(b)) > artifact.DefaultMaxArtifactSize {
		return nil, fmt.Errorf("content layer is larger than %d bytes", artifact.DefaultMaxArtifactSize)
	}
	return b, nil
}

// SameContent says whether two artifact tarballs hold the same files (paths,
// contents and executable bits), whoever packed them: tar order, times and
// gzip settings do not count, so an artifact `flux push` wrote compares
// equal to the same files packed by weir.
func SameContent(a, b []byte) (bool, error) {
	ta, err := artifact.ReadTree(bytes.NewReader(a), artifact.DefaultMaxArchiveSize, 0)
	if err != nil {
		return false, fmt.Errorf("reading the local artifact: %w", err)
	}
	tb, err := artifact.ReadTree(bytes.NewReader(b), artifact.DefaultMaxArchiveSize, 0)
	if err != nil {
		return false, fmt.Errorf("reading the remote artifact: %w", err)
	}
	fa, err := treeFiles(ta)
	if err != nil {
		return false, err
	}
	fb, err := treeFiles(tb)
	if err != nil {
		return false, err
	}
	return maps.Equal(fa, fb), nil
}

// treeFiles maps every file of t to its mode's executable bit and content.
func treeFiles(t *artifact.Tree) (map[string]string, error) {
	files := map[string]string{}
	err := fs.WalkDir(t, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := t.ReadFile(p)
		if err != nil {
			return err
		}
		files[p] = fmt.Sprintf("%t:%s", info.Mode()&0o111 != 0, b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading artifact files: %w", err)
	}
	return files, nil
}
