package ociregistry

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
)

// fileTime is the modification time of every file in an artifact's tarball,
// so that the same files give the same digest on every run.
var fileTime = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

// Artifact is the content of a Flux-style OCI artifact, as `flux push
// artifact` writes it.
type Artifact struct {
	// Files maps slash-separated paths to contents; they become the layer's tarball.
	Files map[string]string
	// Source is the org.opencontainers.image.source annotation, e.g. a Git URL.
	Source string
	// Revision is the org.opencontainers.image.revision annotation, e.g. "main@sha1:…".
	Revision string
}

// PushArtifact pushes a as repo:tag with the registry's own credentials and
// returns the manifest digest ("sha256:…").
func (r *Registry) PushArtifact(t testing.TB, repo, tag string, a Artifact) string {
	t.Helper()
	digest, err := r.pushArtifact(repo, tag, a)
	if err != nil {
		t.Fatalf("push artifact %s:%s: %v", repo, tag, err)
	}
	return digest
}

func (r *Registry) pushArtifact(repo, tag string, a Artifact) (string, error) {
	ref, err := name.NewTag(r.Host()+"/"+repo+":"+tag, name.Insecure)
	if err != nil {
		return "", fmt.Errorf("parse reference: %w", err)
	}
	img, err := ArtifactImage(a)
	if err != nil {
		return "", err
	}
	if err := remote.Write(ref, img, remote.WithAuth(r.auth)); err != nil {
		return "", fmt.Errorf("write %s: %w", ref, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("digest: %w", err)
	}
	return digest.String(), nil
}

// ArtifactImage builds the single-layer OCI image of a Flux artifact, for
// tests that push it with their own client.
func ArtifactImage(a Artifact) (v1.Image, error) {
	content, err := tarGzip(a.Files)
	if err != nil {
		return nil, fmt.Errorf("archive files: %w", err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(content)), nil
	}, tarball.WithMediaType(sourcev1.OCIArtifactLayerMediaType))
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, sourcev1.OCIArtifactConfigMediaType)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer})
	if err != nil {
		return nil, fmt.Errorf("append layer: %w", err)
	}
	annotations := map[string]string{
		ocispec.AnnotationSource:   a.Source,
		ocispec.AnnotationRevision: a.Revision,
	}
	return mutate.Annotations(img, annotations).(v1.Image), nil
}

// tarGzip archives files in path order with fixed times and modes.
func tarGzip(files map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, path := range slices.Sorted(maps.Keys(files)) {
		hdr := &tar.Header{Name: path, Mode: 0o644, Size: int64(len(files[path])), ModTime: fileTime, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("write header of %s: %w", path, err)
		}
		if _, err := io.WriteString(tw, files[path]); err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("close tar: %w", err)
	}
	if err := gz.Close(); err != nil {
		return nil, fmt.Errorf("close gzip: %w", err)
	}
	return buf.Bytes(), nil
}
